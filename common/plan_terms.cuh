/*
 * A planner's candidates as its tools see them (common/test_plan.cu,
 * common/plan_show.cu), included before the step's kernel.cu: its
 * PLAN_TERMS (common/launch.cuh) appends each candidate the planner weighs,
 * with the terms of its modelled time, to `seen`.
 */
#ifndef PLAN_TERMS_CUH
#define PLAN_TERMS_CUH

#include <cstddef>
#include <vector>

struct candidate {
    int rows, cols, cluster, units;
    long long k_tiles, stores, parts;
    double multiply, compute, memory, us;
};
static std::vector<candidate> seen;
static double plan_seen(const candidate &c)
{
    seen.push_back(c);
    return c.us;
}
#define PLAN_TERMS(...) plan_seen(candidate{ __VA_ARGS__ })

// The candidate the planner takes: the first of the least time (its `us < best_us`); seen.size() if none.
static size_t pick_of_seen()
{
    size_t pick = seen.size();
    for (size_t i = 0; i < seen.size(); ++i)
        if (pick == seen.size() || seen[i].us < seen[pick].us)
            pick = i;
    return pick;
}

#endif
