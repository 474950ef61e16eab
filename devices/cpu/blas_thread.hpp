/// The BLAS calls of the process (devices/cpu/cpu_blas.hpp), one at a time, each using every core
/// through OpenBLAS's own threads (8 devices sharing 2 cores never run 8 x 2 BLAS threads at once).
/// While several devices make products at once, the calls queue for one BLAS thread, which runs
/// them back to back (a call made while no other runs, small or with no contention in the last
/// 200 ms, runs on its caller's thread instead: one device alone pays no hand-off): the next starts
/// the moment one ends, without waiting for its caller's thread to be woken as a mutex handed from
/// one device thread to the next did (measured with bench_matmul: doc/performance.md, "After the
/// BLAS thread"). Internal.
#pragma once

#include <functional>

namespace am::detail {

/// Runs `call`, a BLAS call of `flop` floating-point operations, on the BLAS thread behind the
/// calls queued before it (or here, when small and nothing else runs), and returns when it has run
/// (rethrowing what it threw). Called from inside a call, runs it at once.
void run_on_blas_thread(const std::function<void()>& call, double flop);

} // namespace am::detail
