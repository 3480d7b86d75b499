// UTF-8 validation on SSSE3 or AVX2 for TLRuntime's string reader, chosen at run time by CPUID; TLRuntime's scalar
// validator runs elsewhere. The functions only compute.
#ifndef CUTF8_H
#define CUTF8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CUTF8_NONE = 0,   // not x86, or no SSSE3
    CUTF8_SSSE3 = 1,  // 16 bytes per step
    CUTF8_AVX2 = 2,   // 32 bytes per step (the CPU has AVX2 and the OS saves YMM registers)
};

/// The widest validator this CPU runs (CPUID, XGETBV), one of the levels above.
int cutf8_level(void);

/// 1 when `cutf8_level` is at least SSSE3, else 0.
int cutf8_available(void);

/// Whether `length` bytes at `bytes` are well-formed UTF-8 (Unicode Standard, table 3-7): -1 when they are not,
/// 1 when they are and all are ASCII, 0 when they are and some are not; -2 when `cutf8_available` is 0. Runs the
/// validator of `cutf8_level`.
int cutf8_validate(const uint8_t *bytes, size_t length);

/// `cutf8_validate` with the validator of `level` (tests and fuzzing compare them); -2 when the CPU lacks it.
int cutf8_validate_at(const uint8_t *bytes, size_t length, int level);

#ifdef __cplusplus
}
#endif

#endif
