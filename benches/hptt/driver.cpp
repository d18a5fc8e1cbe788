// HPTT (github.com/springer13/hptt) on the relayout bench's pure
// transposes, each timed round after round against the copies the Rust
// bench takes its ceiling from (benches/common/copies.rs: memcpy, rep movsb,
// AVX2 and AVX-512 streaming stores with and without prefetch) on as many
// threads. Prints per transpose: median seconds, the median per-round ratio
// best copy / HPTT, the quietest round's, and memcpy / HPTT. Every result is
// checked element by element first, and every copy byte by byte.
//
// Built and run by benches/hptt_compare.py against an HPTT build of your own:
//   driver THREADS ROUNDS [estimate|measure]
#include <hptt.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using Clock = std::chrono::steady_clock;

static void copy_memcpy(const char* s, char* d, size_t n) { std::memcpy(d, s, n); }

static void copy_rep_movsb(const char* s, char* d, size_t n) {
  asm volatile("rep movsb" : "+S"(s), "+D"(d), "+c"(n) : : "memory");
}

template <bool Prefetch>
__attribute__((target("avx2"))) static void copy_avx2(const char* s, char* d, size_t n) {
  size_t head = (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;
  head = std::min(head, n);
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 128 <= n; i += 128) {
    if (Prefetch) {
      _mm_prefetch(s + i + 1024, _MM_HINT_T0);
      _mm_prefetch(s + i + 1024 + 64, _MM_HINT_T0);
    }
    __m256i a = _mm256_loadu_si256((const __m256i*)(s + i));
    __m256i b = _mm256_loadu_si256((const __m256i*)(s + i + 32));
    __m256i c = _mm256_loadu_si256((const __m256i*)(s + i + 64));
    __m256i e = _mm256_loadu_si256((const __m256i*)(s + i + 96));
    _mm256_stream_si256((__m256i*)(d + i), a);
    _mm256_stream_si256((__m256i*)(d + i + 32), b);
    _mm256_stream_si256((__m256i*)(d + i + 64), c);
    _mm256_stream_si256((__m256i*)(d + i + 96), e);
  }
  _mm_sfence();
  std::memcpy(d + i, s + i, n - i);
}

template <bool Prefetch>
__attribute__((target("avx512f"))) static void copy_avx512(const char* s, char* d, size_t n) {
  size_t head = (64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63;
  head = std::min(head, n);
  std::memcpy(d, s, head);
  size_t i = head;
  for (; i + 256 <= n; i += 256) {
    if (Prefetch) {
      for (int k = 0; k < 4; ++k) _mm_prefetch(s + i + 1024 + 64 * k, _MM_HINT_T0);
    }
    __m512i a = _mm512_loadu_si512(s + i);
    __m512i b = _mm512_loadu_si512(s + i + 64);
    __m512i c = _mm512_loadu_si512(s + i + 128);
    __m512i e = _mm512_loadu_si512(s + i + 192);
    _mm512_stream_si512((__m512i*)(d + i), a);
    _mm512_stream_si512((__m512i*)(d + i + 64), b);
    _mm512_stream_si512((__m512i*)(d + i + 128), c);
    _mm512_stream_si512((__m512i*)(d + i + 192), e);
  }
  _mm_sfence();
  std::memcpy(d + i, s + i, n - i);
}

struct Copy {
  const char* name;
  void (*run)(const char*, char*, size_t);
};

static double copy_time(const Copy& c, const char* s, char* d, size_t n, int threads) {
  auto t0 = Clock::now();
  if (threads == 1) {
    c.run(s, d, n);
  } else {
    size_t share = ((n + threads - 1) / threads + 4095) / 4096 * 4096;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (int t = 0; t < threads; ++t) {
      size_t from = std::min(n, share * t), to = std::min(n, share * (t + 1));
      c.run(s + from, d + from, to - from);
    }
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  const char* name;       // the Rust bench's case and operation
  std::vector<int> size;  // HPTT's sizes of A, fastest first
  std::vector<int> perm;  // B's j-th index is A's perm[j]-th
};

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 11;
  bool measure = argc > 3 && std::string(argv[3]) == "measure";
  std::vector<Copy> copies = {{"memcpy", copy_memcpy},
                              {"rep_movsb", copy_rep_movsb},
                              {"stream_avx2", copy_avx2<false>},
                              {"stream_avx2_prefetch", copy_avx2<true>}};
  if (__builtin_cpu_supports("avx512f")) {
    copies.push_back({"stream_avx512", copy_avx512<false>});
    copies.push_back({"stream_avx512_prefetch", copy_avx512<true>});
  }
  // f32[4096,4096]{0,1} to {1,0} (the way back is the same transpose), and
  // f32[32,64,64,128]{3,2,1,0} to {1,3,2,0} and back: in HPTT's terms,
  // column-major sizes (minor first) and the source dim of each of B's.
  std::vector<Case> cases = {
      {"f32_transpose convert", {4096, 4096}, {1, 0}},
      {"f32_4d_permute_untiled convert", {128, 64, 64, 32}, {2, 0, 1, 3}},
      {"f32_4d_permute_untiled convert_back", {64, 128, 64, 32}, {1, 2, 0, 3}},
  };
  for (const Case& c : cases) {
    size_t n = 1;
    for (int s : c.size) n *= s;
    size_t bytes = n * sizeof(float);
    std::vector<float> A(n), B(n, 0.0f);
    for (size_t i = 0; i < n; ++i) A[i] = float(i % 16777216);
    // Each copy its own source and destination, read and written once a
    // round as HPTT's are: copies sharing one source would read it out of a
    // last-level cache that holds 64 MiB (see `copy_buffers` in
    // benches/relayout.rs).
    std::vector<std::vector<char>> cs(copies.size(), std::vector<char>(bytes)),
        cd(copies.size(), std::vector<char>(bytes));
    for (size_t k = 0; k < copies.size(); ++k)
      for (size_t i = 0; i < bytes; ++i) cs[k][i] = char(i * 7 + k);
    int dim = int(c.size.size());
    auto plan = hptt::create_plan(c.perm.data(), dim, 1.0f, A.data(), c.size.data(), nullptr, 0.0f,
                                  B.data(), nullptr, measure ? hptt::MEASURE : hptt::ESTIMATE, threads);
    plan->execute();
    // Every element where the permutation puts it.
    std::vector<size_t> strideA(dim), sizeB(dim);
    for (int k = 0; k < dim; ++k) strideA[k] = k == 0 ? 1 : strideA[k - 1] * c.size[k - 1];
    for (int j = 0; j < dim; ++j) sizeB[j] = c.size[c.perm[j]];
    for (size_t b = 0; b < n; ++b) {
      size_t rest = b, a = 0;
      for (int j = 0; j < dim; ++j) {
        a += (rest % sizeB[j]) * strideA[c.perm[j]];
        rest /= sizeB[j];
      }
      if (B[b] != A[a]) {
        std::fprintf(stderr, "%s: B[%zu] is %f, expected A[%zu] = %f\n", c.name, b, B[b], a, A[a]);
        return 1;
      }
    }
    for (size_t k = 0; k < copies.size(); ++k) {
      std::memset(cd[k].data(), 0, bytes);
      copy_time(copies[k], cs[k].data(), cd[k].data(), bytes, threads);
      if (std::memcmp(cs[k].data(), cd[k].data(), bytes) != 0) {
        std::fprintf(stderr, "%s copied wrong bytes\n", copies[k].name);
        return 1;
      }
    }
    std::vector<double> secs, best, mem;
    std::vector<int> wins(copies.size());
    for (int r = 0; r < rounds; ++r) {
      std::vector<double> t;
      for (size_t k = 0; k < copies.size(); ++k)
        t.push_back(copy_time(copies[k], cs[k].data(), cd[k].data(), bytes, threads));
      size_t w = std::min_element(t.begin(), t.end()) - t.begin();
      wins[w]++;
      auto t0 = Clock::now();
      plan->execute();
      double h = std::chrono::duration<double>(Clock::now() - t0).count();
      secs.push_back(h);
      best.push_back(t[w] / h);
      mem.push_back(t[0] / h);
    }
    size_t w = std::max_element(wins.begin(), wins.end()) - wins.begin();
    std::printf("hptt %s threads %d %.6f best_copy_ratio %.2f best_round %.2f memcpy_ratio %.2f best_copy %s\n",
                c.name, threads, median(secs), median(best), *std::max_element(best.begin(), best.end()),
                median(mem), copies[w].name);
    std::fflush(stdout);
  }
  return 0;
}
