// UTF-8 validation on SSSE3 for TLRuntime's string reader, chosen at run time by CPUID; TLRuntime's scalar
// validator runs elsewhere. The functions only compute.
#ifndef CUTF8_H
#define CUTF8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this build targets x86 and the CPU reports SSSE3 (CPUID leaf 1), else 0.
int cutf8_available(void);

/// Whether `length` bytes at `bytes` are well-formed UTF-8 (Unicode Standard, table 3-7): -1 when they are not,
/// 1 when they are and all are ASCII, 0 when they are and some are not; -2 when `cutf8_available` is 0.
int cutf8_validate(const uint8_t *bytes, size_t length);

#ifdef __cplusplus
}
#endif

#endif
