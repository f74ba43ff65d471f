#include "step.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int parse_arch(const char *s, struct arch *a)
{
    if (strncmp(s, "sm_", 3) != 0 || !isdigit((unsigned char)s[3]))
        return 0;
    int number = 0;
    const char *p = s + 3;
    for (; isdigit((unsigned char)*p) && number < 1000; p++)
        number = number * 10 + (*p - '0');
    a->exact = *p == 'a';
    if (a->exact)
        p++;
    if (*p != '\0' || number < 10 || number >= 1000)
        return 0;
    /* sm_75 is 7.5, sm_100 is 10.0: the last digit is the minor version. */
    a->major = number / 10;
    a->minor = number % 10;
    return 1;
}

int arch_runs_on(const struct arch *a, int major, int minor)
{
    if (a->exact)
        return major == a->major && minor == a->minor;
    return major * 10 + minor >= a->major * 10 + a->minor;
}

/* The architecture's family name ("Turing", "Hopper" ...). */
static const char *arch_family(int major, int minor)
{
    switch (major) {
    case 7: return minor >= 5 ? "Turing" : "Volta";
    case 8: return minor == 9 ? "Ada" : "Ampere";
    case 9: return "Hopper";
    case 10: case 11: case 12: return "Blackwell";
    default: return major < 7 ? "pre-Volta" : "a newer architecture";
    }
}

void describe_need(const char *arch, char *buf, size_t size)
{
    struct arch a;
    if (!parse_arch(arch, &a))
        snprintf(buf, size, "%s", arch);
    else if (a.exact)
        snprintf(buf, size, "%s, a %s GPU (compute capability %d.%d)", arch,
                 arch_family(a.major, a.minor), a.major, a.minor);
    else
        snprintf(buf, size, "%s, compute capability %d.%d or newer (%s or later)", arch, a.major,
                 a.minor, arch_family(a.major, a.minor));
}

int input_bytes(enum input_type input)
{
    return input == INPUT_E4M3 ? 1 : input == INPUT_FP16 ? 2 : 4; /* FP8, IEEE half, or float */
}
