/*
 * scripts/plan.sh's program: a step's planner on the CPU, and every
 * candidate it weighs. Built with the step's kernel.cu included
 * (-DKERNEL='"stepNN_name/kernel.cu"'; -DFP8=1 for the FP8 step); the
 * step's PLAN_TERMS (common/launch.cuh) hands over each candidate's terms
 * as the planner computes them, so that what is printed is the planner's
 * own arithmetic.
 *
 *   plan_show M N K SMS FIT    FIT: clusters that fit at once (steps 12 on)
 *
 * A line per candidate in the order the planner weighs them, its pick (the
 * first of the least modelled time: the planner's `us < best_us`) marked;
 * exits 1 if plan() returned another.
 */
#include "plan_terms.cuh"

#include <cstdio>
#include <cstdlib>

#include KERNEL
#include "plan_of.cuh"

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: plan_show M N K SMS FIT\n");
        return 2;
    }
    const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]), sms = atoi(argv[4]), fit = atoi(argv[5]);
    // Rows of A and B on 32-byte sectors as the step's call finds them in memory from cudaMalloc: the rows as they
    // are where they are whole pieces, else repacked (common/repack.cuh). A's rows are K elements; B's N halves, or
    // in the FP8 step (B N x K) K bytes.
#if FP8
    using element = uint8_t;
    const int b_row = K;
#else
    using element = __half;
    const int b_row = N;
#endif
    const auto on_sectors = [](int cols) {
        return (cols % REPACK_PIECE<element> == 0 ? cols : repacked_pitch<element>(cols)) * sizeof(element) % 32 == 0;
    };
    const auto how = plan_for(M, N, K, sms, on_sectors(K), on_sectors(b_row), fit);

    const size_t pick = pick_of_seen();
    printf("%-9s %7s %5s %5s %7s %6s %5s %9s %9s %9s %9s\n", "tile", "cluster", "units", "split", "k-tiles",
           "stores", "parts", "multiply", "+stores", "memory", "us");
    for (size_t i = 0; i < seen.size(); ++i) {
        const candidate &c = seen[i];
        char tile[16];
        snprintf(tile, sizeof tile, "%dx%d", c.rows, c.cols);
        printf("%-9s %7d %5d %5s %7lld %6lld %5lld %9.1f %9.1f %9.1f %9.1f%s\n", tile, c.cluster, c.units,
               c.parts > 1 ? "yes" : "no", c.k_tiles, c.stores, c.parts, c.multiply, c.compute - c.multiply, c.memory,
               c.us, i == pick ? "  <- the pick" : "");
    }
    if (pick == seen.size() || !same_plan(seen[pick], how)) {
        printf("plan() returned another plan: %dx%d tiles, %d units of %d\n", rows_of(how), how.bn, units_of(how),
               cluster_of(how));
        return 1;
    }
    return 0;
}
