// An exact Jaccard self-join by prefix filtering (AllPairs with size and positional filters), in
// plain C++ with threads: the yardstick for issue #14 target 5 ("dedup within 1.5x of an exact
// prefix-filtering join on the same cores"). Written for this benchmark; not part of neardup.
//
// Input: the binary file bench/short-join.ts writes: u32 n, then per set u32 length and that many
// u32 fingerprints (distinct, any order). Only the join is timed (not reading the file): tokens
// ranked rarest first, sets sorted by rank, prefixes indexed, probed in parallel, candidates
// verified by a merge that stops once the overlap needed is out of reach. Prints pairs,
// candidates, seconds, and a checksum of the pairs.
//
// Build: g++ -O3 -march=native -pthread -o /tmp/ppjoin bench/native/ppjoin.cpp
// Run:   /tmp/ppjoin sets.bin 0.5 2
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unordered_map>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) { fprintf(stderr, "usage: ppjoin sets.bin threshold threads\n"); return 2; }
  const double t = atof(argv[2]);
  const int threads = atoi(argv[3]);
  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  uint32_t n;
  if (fread(&n, 4, 1, f) != 1) return 1;
  std::vector<std::vector<uint32_t>> raw(n);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t len;
    if (fread(&len, 4, 1, f) != 1) return 1;
    raw[i].resize(len);
    if (len && fread(raw[i].data(), 4, len, f) != len) return 1;
  }
  fclose(f);
  auto t0 = std::chrono::steady_clock::now();

  // Rank tokens by frequency (rarest first, ties by value), and rewrite every set as sorted ranks.
  std::unordered_map<uint32_t, uint32_t> freq;
  freq.reserve(1 << 20);
  for (auto& s : raw) for (uint32_t v : s) freq[v]++;
  std::vector<std::pair<uint32_t, uint32_t>> byFreq(freq.begin(), freq.end());
  std::sort(byFreq.begin(), byFreq.end(), [](auto& a, auto& b) { return a.second != b.second ? a.second < b.second : a.first < b.first; });
  std::unordered_map<uint32_t, uint32_t> rank;
  rank.reserve(byFreq.size() * 2);
  for (uint32_t r = 0; r < byFreq.size(); r++) rank[byFreq[r].first] = r;
  // Records in order of size (then id); sets as sorted ranks.
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; i++) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return raw[a].size() != raw[b].size() ? raw[a].size() < raw[b].size() : a < b; });
  std::vector<std::vector<uint32_t>> sets(n);
  for (uint32_t k = 0; k < n; k++) {
    auto& s = sets[k];
    for (uint32_t v : raw[order[k]]) s.push_back(rank[v]);
    std::sort(s.begin(), s.end());
  }
  // Index prefixes (for a self-join in size order: |x| - ceil(2t/(1+t)|x|) + 1 tokens).
  const uint32_t T = byFreq.size();
  std::vector<uint32_t> listStart(T + 1, 0);
  auto indexPrefix = [&](size_t len) -> size_t { return len == 0 ? 0 : len - (size_t)std::ceil(2 * t / (1 + t) * len - 1e-9) + 1; };
  auto probePrefix = [&](size_t len) -> size_t { return len == 0 ? 0 : len - (size_t)std::ceil(t * len - 1e-9) + 1; };
  for (uint32_t k = 0; k < n; k++) for (size_t i = 0; i < std::min(indexPrefix(sets[k].size()), sets[k].size()); i++) listStart[sets[k][i] + 1]++;
  for (uint32_t r = 0; r < T; r++) listStart[r + 1] += listStart[r];
  std::vector<uint32_t> postRec(listStart[T]), postPos(listStart[T]);
  {
    std::vector<uint32_t> fill(listStart.begin(), listStart.end() - 1);
    for (uint32_t k = 0; k < n; k++)
      for (size_t i = 0; i < std::min(indexPrefix(sets[k].size()), sets[k].size()); i++) {
        uint32_t at = fill[sets[k][i]]++;
        postRec[at] = k;
        postPos[at] = (uint32_t)i;
      }
  }
  // Probe in parallel: each x probes records before it in size order.
  std::atomic<uint32_t> next(0);
  std::vector<uint64_t> pairsOf(threads, 0), candsOf(threads, 0), sumOf(threads, 0);
  auto work = [&](int w) {
    std::vector<int32_t> count(n, 0);
    std::vector<uint32_t> touched;
    for (;;) {
      uint32_t start = next.fetch_add(256);
      if (start >= n) break;
      for (uint32_t x = start; x < std::min<uint32_t>(n, start + 256); x++) {
        const auto& sx = sets[x];
        const size_t lx = sx.size();
        if (lx == 0) continue;
        const size_t minY = (size_t)std::ceil(t * lx - 1e-9);
        touched.clear();
        const size_t pp = std::min(probePrefix(lx), lx);
        for (size_t i = 0; i < pp; i++) {
          const uint32_t tok = sx[i];
          for (uint32_t at = listStart[tok]; at < listStart[tok + 1]; at++) {
            const uint32_t y = postRec[at];
            if (y >= x) break;  // lists are in size order: only earlier records
            const size_t ly = sets[y].size();
            if (ly < minY) continue;
            if (count[y] < 0) continue;
            const size_t alpha = (size_t)std::ceil(t / (1 + t) * (lx + ly) - 1e-9);
            const size_t j = postPos[at];
            if (count[y] == 0) touched.push_back(y);
            if ((size_t)count[y] + 1 + std::min(lx - i - 1, ly - j - 1) >= alpha) count[y]++;
            else count[y] = -1;
          }
        }
        for (uint32_t y : touched) {
          if (count[y] > 0) {
            candsOf[w]++;
            const auto& sy = sets[y];
            const size_t ly = sy.size();
            const size_t alpha = (size_t)std::ceil(t / (1 + t) * (lx + ly) - 1e-9);
            // Merge, stopping as soon as the tokens left cannot make up the overlap needed.
            size_t a = 0, b = 0, inter = 0;
            while (a < lx && b < ly) {
              if (inter + std::min(lx - a, ly - b) < alpha) break;
              if (sx[a] < sy[b]) a++;
              else if (sx[a] > sy[b]) b++;
              else { inter++; a++; b++; }
            }
            const double j = (double)inter / (double)(lx + ly - inter);
            if (j >= t) {
              pairsOf[w]++;
              uint64_t p = order[x], q = order[y];
              if (p > q) std::swap(p, q);
              sumOf[w] += p * 1000003ull + q;
            }
          }
          count[y] = 0;
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; w++) pool.emplace_back(work, w);
  for (auto& th : pool) th.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t pairs = 0, cands = 0, sum = 0;
  for (int w = 0; w < threads; w++) { pairs += pairsOf[w]; cands += candsOf[w]; sum += sumOf[w]; }
  printf("pairs=%llu candidates=%llu seconds=%.3f checksum=%llu\n", (unsigned long long)pairs, (unsigned long long)cands, s, (unsigned long long)sum);
}
