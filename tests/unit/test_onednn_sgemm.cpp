// Which library makes float32 products (AM_SGEMM, oneDNN installed or not), and oneDNN's product
// against OpenBLAS's on the shapes and transposes CPU devices use.
#include "devices/cpu/blas_kernels.hpp"
#include "devices/cpu/onednn_sgemm.hpp"

#include <actormesh.hpp>

#include <catch2/catch.hpp>
#include <cblas.h>

#include <cmath>
#include <vector>

using am::detail::choose_sgemm;

TEST_CASE("float32 products: oneDNN when installed, OpenBLAS when asked or missing", "[unit][blas]") {
  CHECK(choose_sgemm(nullptr, true, "2.6.3").onednn);
  CHECK(choose_sgemm(nullptr, true, "2.6.3").why.find("oneDNN 2.6.3") == 0);
  CHECK(choose_sgemm("onednn", true, "2.6.3").onednn);
  CHECK_FALSE(choose_sgemm("openblas", true, "2.6.3").onednn);
  CHECK(choose_sgemm("openblas", true, "2.6.3").why == "OpenBLAS (AM_SGEMM=openblas)");
  CHECK_FALSE(choose_sgemm(nullptr, false, "").onednn);
  CHECK(choose_sgemm("onednn", false, "").why.find("though AM_SGEMM=onednn asked for it") != std::string::npos);
  CHECK_THROWS_WITH(choose_sgemm("mkl", true, "2.6.3"), "AM_SGEMM must be onednn or openblas, not 'mkl'");
}

TEST_CASE("oneDNN's float32 product equals OpenBLAS's, transposed operands included", "[unit][blas]") {
  if (!am::detail::float32_products().onednn) {
    WARN("oneDNN is not in use here: " << am::detail::float32_products().why);
    return;
  }
  const int m = 37, k = 53, n = 29;
  std::vector<float> a(m * k), b(k * n);
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<float>(static_cast<int>(i * 7 % 23) - 11) * 0.125f;
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<float>(static_cast<int>(i * 5 % 19) - 9) * 0.25f;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      // The same values laid out transposed where asked: A as k x m, B as n x k.
      std::vector<float> at(a.size()), bt(b.size());
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < k; ++j)
          at[j * m + i] = a[i * k + j];
      for (int i = 0; i < k; ++i)
        for (int j = 0; j < n; ++j)
          bt[j * k + i] = b[i * n + j];
      const float* pa = ta ? at.data() : a.data();
      const float* pb = tb ? bt.data() : b.data();
      const int lda = ta ? m : k, ldb = tb ? k : n;
      std::vector<float> ours(m * n, -1.0f), theirs(m * n);
      REQUIRE(am::detail::onednn_sgemm(ta, tb, m, n, k, pa, lda, pb, ldb, ours.data(), n));
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, pa,
                  lda, pb, ldb, 0.0f, theirs.data(), n);
      for (int i = 0; i < m * n; ++i)
        REQUIRE(ours[i] == Approx(theirs[i]).margin(1e-4));
    }
}

TEST_CASE("oneDNN runs kernels as wide as this CPU's vectors", "[unit][blas]") {
  if (!am::detail::float32_products().onednn) {
    WARN("oneDNN is not in use here: " << am::detail::float32_products().why);
    return;
  }
  const auto cpu = am::detail::vector_bits(am::detail::this_cpu_features());
  INFO("oneDNN " << am::detail::float32_products().why << "; CPU vectors " << cpu << " bits");
  CHECK(am::detail::onednn_vector_bits() >= cpu);
}
