/*
 * A step's planner, checked without a GPU: built with the step's kernel.cu
 * included (-DKERNEL='"stepNN_name/kernel.cu"'), it asks plan() for the
 * launch of every shape below on several SM counts and walks each plan on
 * the CPU, with the kernel's own part(), share_of(), group() and key(). A
 * step with clusters (a plan with `cluster` and `units`) is asked for every
 * alignment of A's and B's rows and several counts of clusters that fit:
 *
 *   - the plan: a tile width wgmma takes, rows of one consumer or both (or
 *     swapped: 8 to 32 rows on wgmma's N side, 64 columns a consumer),
 *     blocks alone or clusters that fit, 1 to sms blocks in all, whole tiles
 *     in whole rounds of clusters (or blocks), split exactly when some tiles
 *     are not whole;
 *   - every k-tile of every tile multiplied by exactly one part;
 *   - the parts of a split tile on the consecutive blocks the fixup names
 *     (share_of), each group of the fixup counted by exactly its members, so
 *     that one last part adds the others' sums, and one part stores the tile;
 *   - no two tiles sharing a slot or a count;
 *   - the plan the fastest of the candidates whose terms it hands to
 *     scripts/plan.sh (PLAN_TERMS, common/launch.cuh).
 *
 * The fixup never waits (the last of a group finds the others' sums there),
 * so no block can wait for one that may not have started.
 *
 * Prints a FAIL line per wrong plan (the first few) and a summary; exits 1
 * if one was wrong.
 */
#include "plan_terms.cuh"

#include KERNEL
#include "plan_of.cuh"

#include <algorithm>
#include <cstdio>
#include <map>
#include <type_traits>
#include <vector>

static int failures = 0, plans = 0;

static void fail(int M, int N, int K, int sms, const char *what)
{
    if (++failures <= 10)
        printf("FAIL  plan(%d, %d, %d, %d SMs): %s\n", M, N, K, sms, what);
}

static void check(int M, int N, int K, int sms, bool a_sectors, bool b_sectors, int fit)
{
    seen.clear();
    const auto how = plan_for(M, N, K, sms, a_sectors, b_sectors, fit);
    ++plans;
    const size_t pick = pick_of_seen();
    if (pick == seen.size() || !same_plan(seen[pick], how))
        return fail(M, N, K, sms, "the fastest candidate by its terms (PLAN_TERMS, scripts/plan.sh) is not its plan");
    const int units = units_of(how), cluster = cluster_of(how), rows = rows_of(how);
    const bool swapped = swapped_of(how);
    const int tile_rows = tile_rows_of(how), tiles_m = (M + tile_rows - 1) / tile_rows;
    const int tiles_n = (N + how.bn - 1) / how.bn;
    const int tiles = tiles_m * tiles_n, tiles_k = (K + BK - 1) / BK;
    if (rows != WGMMA_M && rows != CONSUMERS * WGMMA_M &&
        !(swapped && rows % MMA_N == 0 && WGMMA_M % rows == 0 && how.bn == CONSUMERS * WGMMA_M))
        return fail(M, N, K, sms, "a tile of rows neither one consumer's wgmma, both's, nor swapped (64 columns each)");
    if (how.bn < 64 || how.bn > 256 || how.bn % 64 != 0)
        return fail(M, N, K, sms, "a tile width of whole lines of B that wgmma's n does not take");
    if (cluster != 1 && (cluster < 2 || cluster > 8 || units * cluster > 2 * fit)) // fit: clusters of two
        return fail(M, N, K, sms, "clusters of more blocks than the portable 8, or more clusters than fit");
    if (swapped && cluster > 1 && (how.whole != tiles || units != tiles || cluster > tiles_k))
        return fail(M, N, K, sms, "a swapped tile's cluster not one round of whole tiles, or a block with no k-tile");
    if (units < 1 || units * cluster > sms)
        return fail(M, N, K, sms, "blocks outside 1 .. SMs");
    if (how.whole < 0 || how.whole > tiles || (how.whole < tiles && how.whole % units != 0))
        return fail(M, N, K, sms, "whole tiles not in whole rounds of blocks (or clusters)");
    if (how.split != (how.whole < tiles))
        return fail(M, N, K, sms, "split, but every tile whole (or the other way)");

    // Every part of every block: [k0, k1) of its tile, and the block that multiplies it.
    struct piece { int k0, k1, block; };
    std::map<int, std::vector<piece>> split_tiles;
    std::vector<int> whole_done(how.whole, 0);
    for (int b = 0; b < units; ++b) {
        int tile, k0, k1;
        for (int p = 0; how.split ? part<true>(p, b, units, how.whole, tiles, tiles_k, tile, k0, k1)
                                  : part<false>(p, b, units, how.whole, tiles, tiles_k, tile, k0, k1);
             ++p) {
            if (tile < 0 || tile >= tiles || k0 < 0 || k1 > tiles_k || k0 >= k1)
                return fail(M, N, K, sms, "a part outside C or K, or empty");
            if (tile < how.whole) {
                if (k0 != 0 || k1 != tiles_k || whole_done[tile]++)
                    return fail(M, N, K, sms, "a whole tile not multiplied once, whole");
            } else {
                split_tiles[tile].push_back({ k0, k1, b });
            }
        }
    }
    for (int t = 0; t < how.whole; ++t)
        if (!whole_done[t])
            return fail(M, N, K, sms, "a whole tile nobody multiplies");
    if ((int)split_tiles.size() != tiles - how.whole)
        return fail(M, N, K, sms, "a split tile nobody multiplies");

    const long long split_k_tiles = (long long)(tiles - how.whole) * tiles_k;
    std::map<int, int> owner; // key -> the tile whose slot or counts it is
    for (auto &[tile, pieces] : split_tiles) {
        std::sort(pieces.begin(), pieces.end(), [](const piece &a, const piece &b) { return a.k0 < b.k0; });
        for (size_t j = 0; j < pieces.size(); ++j)
            if (pieces[j].k0 != (j ? pieces[j - 1].k1 : 0) || (j + 1 == pieces.size() && pieces[j].k1 != tiles_k))
                return fail(M, N, K, sms, "a split tile's k-tiles not covered exactly once");
        if (pieces.size() == 1 && pieces[0].k1 - pieces[0].k0 == tiles_k)
            continue; // whole after all, in one share: no fixup (the kernel's `alone`)
        // The fixup's view: parts first .. first + parts - 1, part i on block first + i, in k order.
        const long long first_k = (long long)(tile - how.whole) * tiles_k;
        const int first = share_of(first_k, units, split_k_tiles);
        const int parts = share_of(first_k + tiles_k - 1, units, split_k_tiles) - first + 1;
        if (parts != (int)pieces.size())
            return fail(M, N, K, sms, "the fixup counts a different number of parts than multiply the tile");
        for (int i = 0; i < parts; ++i)
            if (pieces[i].block != first + i)
                return fail(M, N, K, sms, "a part of a split tile not on the block the fixup names");
        // The fixup's levels: the parts that go on (the last of each group) and each group's count.
        std::vector<int> going;
        for (int i = 0; i < parts; ++i)
            going.push_back(i);
        for (int size = 1, level = 0; size < parts; size *= FAN_IN, ++level) {
            if (level >= LEVELS)
                return fail(M, N, K, sms, "more levels than LEVELS");
            std::map<int, std::vector<int>> groups; // head -> the places of the parts counted there
            std::map<int, int> members;
            for (int i : going) {
                int head, me, n;
                group(i, size, parts, head, me, n);
                if (me < 0 || me >= n || head + me * size > i || i >= head + (me + 1) * size)
                    return fail(M, N, K, sms, "a part's place in its group not its share of the parts");
                groups[head].push_back(me);
                members[head] = n;
            }
            going.clear();
            for (auto &[head, places] : groups) {
                std::sort(places.begin(), places.end());
                for (int m = 0; m < (int)places.size(); ++m)
                    if (places[m] != m)
                        return fail(M, N, K, sms, "a group not counted once by each of its members");
                if ((int)places.size() != members[head])
                    return fail(M, N, K, sms, "a group's count never reaches its members: no last part");
                for (int m = 0; m < members[head]; ++m) {
                    const int k = key(first, head + m * size);
                    if (k < 0 || k >= 2 * units || (owner.count(k) && owner[k] != tile))
                        return fail(M, N, K, sms, "a slot or count outside the workspace, or two tiles'");
                    owner[k] = tile;
                }
                going.push_back(head); // the last goes on with the group's sum, in its first part's place
            }
        }
        if (going.size() != 1)
            return fail(M, N, K, sms, "not exactly one part left to store the tile");
    }
}

int main()
{
    // Every class of scripts/shapes.sh, sizes from 1 to 65536 and odd ones.
    const int shapes[][3] = {
        { 1024, 1024, 1024 }, { 2048, 2048, 2048 }, { 4096, 4096, 4096 }, { 8192, 8192, 8192 },
        { 1000, 1000, 1000 }, { 3000, 3000, 3000 }, { 5000, 5000, 5000 }, { 6144, 6144, 6144 },
        { 7000, 7000, 7000 }, { 16, 8192, 8192 }, { 128, 4096, 4096 }, { 256, 8192, 4096 },
        { 512, 12288, 4096 }, { 16384, 64, 4096 }, { 32768, 128, 4096 }, { 8192, 96, 8192 },
        { 65536, 16, 4096 }, { 1024, 1024, 16384 }, { 512, 1024, 65536 }, { 2048, 2048, 32768 },
        { 256, 256, 131072 }, { 1536, 1536, 8192 }, { 4096, 4096, 512 }, { 3000, 3000, 512 },
        { 768, 8192, 1024 }, { 6000, 3072, 1024 }, { 4096, 4096, 4100 }, { 4096, 4100, 4096 },
        { 3000, 3002, 3002 }, { 4095, 4095, 4095 }, { 4096, 12288, 4096 }, { 2048, 11008, 4096 },
        { 2048, 4096, 11008 }, { 512, 32000, 4096 }, { 1, 1, 1 }, { 1, 65536, 1 }, { 65536, 1, 65536 },
        { 65536, 65536, 64 }, { 20, 300, 30000 }, { 130, 520, 90000 }, { 104, 664, 15368 },
        { 1544, 824, 872 }, { 2304, 4608, 1536 }, { 127, 129, 1031 }, { 33, 65, 17 }, { 4000, 176, 4200 },
        { 1, 4096, 4096 }, { 8, 4096, 11008 }, { 32, 5120, 13824 }, { 16, 14336, 4096 }, { 3, 1000, 130 },
    };
    const int sm_counts[] = { 132, 114, 78, 1, 2, 7 };
    // Clusters (of two) that fit: half the SMs, fewer (GPCs of odd sizes), one, none (the GPU cannot say).
    const auto each = [](int m, int n, int k, int sms) {
        if constexpr (!has_clusters<launch_plan>::value)
            check(m, n, k, sms, true, true, 0);
        else
            for (int fit : { sms / 2, sms / 2 - 5, 1, 0 })
                for (int a_sectors = 0; a_sectors < 2; ++a_sectors)
                    for (int b_sectors = 0; b_sectors < 2; ++b_sectors)
                        check(m, n, k, sms, a_sectors, b_sectors, min(max(fit, 0), sms / 2));
    };
    for (const auto &s : shapes)
        for (int sms : sm_counts)
            each(s[0], s[1], s[2], sms);
    // And a grid of sizes: 1 to 65536 in steps that hit tile edges and miss them.
    const int sizes[] = { 1, 7, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1025, 4097, 16385, 65536 };
    for (int m : sizes)
        for (int n : sizes)
            for (int k : sizes)
                for (int sms : { 132, 114, 78 })
                    each(m, n, k, sms);
    printf("%s  %d plans checked: every k-tile once, every split tile's parts counted once per level, "
           "one part storing it, no slot shared, the plan the fastest of its candidates' terms\n",
           failures ? "FAIL" : "PASS", plans);
    return failures ? 1 : 0;
}
