/*
 * A step's plan() as the planner's tools see it (common/test_plan.cu,
 * common/plan_show.cu), included after the step's kernel.cu: one call for
 * steps with clusters and without, and a plan's units, blocks a cluster and
 * rows in the same terms whatever the step.
 */
#ifndef PLAN_OF_CUH
#define PLAN_OF_CUH

#include <type_traits>

template <class P, class = void> struct has_clusters : std::false_type {};
template <class P> struct has_clusters<P, std::void_t<decltype(P::cluster)>> : std::true_type {};

// A step's plan in the same terms: units (blocks, or clusters) and the blocks in each.
template <class P> int units_of(const P &p) { if constexpr (has_clusters<P>::value) return p.units; else return p.blocks; }
template <class P> int cluster_of(const P &p) { if constexpr (has_clusters<P>::value) return p.cluster; else return 1; }
template <class P, class = void> struct has_rows : std::false_type {};
template <class P> struct has_rows<P, std::void_t<decltype(P::bm)>> : std::true_type {};
// A tile's rows: the plan's (one consumer's or both's), or, in a step without, both consumers' wgmma.
template <class P> int rows_of(const P &p) { if constexpr (has_rows<P>::value) return p.bm; else return CONSUMERS * WGMMA_M; }

// plan() of a step with clusters, for rows of A and B on sectors or not and `fit` clusters that fit (as the
// step's gemm_launch asks the GPU); of a step without, one plan whatever the alignment and the clusters. Templates
// on the type of fit, so that the compiler tries the one that fits the step and drops the other.
template <class F>
auto plan_for(int M, int N, int K, int sms, bool a_sectors, bool b_sectors, F fit)
    -> decltype(plan(M, N, K, sms, a_sectors, b_sectors, fit))
{
    return plan(M, N, K, sms, a_sectors, b_sectors, fit);
}
template <class F>
auto plan_for(int M, int N, int K, int sms, bool, bool, F fit) -> decltype(plan(M, N, K, sms + 0 * fit))
{
    return plan(M, N, K, sms + 0 * fit);
}


// Swapped tiles (step 15): fewer rows than wgmma's M, on its N side; in a cluster, each block a slice of the tile's
// k-tiles, so a tile is its rows alone, not the cluster's rows.
template <class P> bool swapped_of(const P &how) { return rows_of(how) < WGMMA_M; }
template <class P> int tile_rows_of(const P &how)
{
    return swapped_of(how) ? rows_of(how) : cluster_of(how) * rows_of(how);
}

// Whether a plan's tiles are each on more than one block: split, or swapped in clusters.
template <class P> bool split_of(const P &how) { return how.split || (swapped_of(how) && cluster_of(how) > 1); }

// Whether a candidate the planner weighed (common/plan_terms.cuh) is the plan it returned.
template <class C, class P> bool same_plan(const C &c, const P &how)
{
    return c.rows == rows_of(how) && c.cols == how.bn && c.cluster == cluster_of(how) && c.units == units_of(how) &&
           (c.parts > 1) == split_of(how);
}

#endif
