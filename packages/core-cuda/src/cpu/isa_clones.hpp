// BSRMM_CPU_CLONES: compile a CPU kernel entry point twice, for x86-64-v3 (AVX2 + FMA) and the
// baseline, and let the loader pick one per machine (ifunc). Everything such an entry calls
// must be always_inline so the whole loop nest is compiled for the chosen instruction set; a
// shipped build never uses -march=native. Not under ThreadSanitizer: the loader runs ifunc
// resolvers before the TSan runtime is initialised, and an instrumented resolver crashes there.
// Put cloned functions in an anonymous namespace: GCC gives a target_clones function's
// dispatcher default visibility whatever is asked for, and internal linkage keeps it out of the
// library's exported symbols.
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BSRMM_CPU_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define BSRMM_CPU_THREAD_SANITIZER 1
#endif
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && \
    !defined(BSRMM_CPU_THREAD_SANITIZER)
#define BSRMM_CPU_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define BSRMM_CPU_CLONES
#endif

#if defined(__GNUC__)
#define BSRMM_CPU_INLINE inline __attribute__((always_inline))
#else
#define BSRMM_CPU_INLINE inline
#endif
