// Montgomery modular exponentiation for MTProtoCrypto's portable backend: the inner loops of RSA, DH and SRP,
// in C so that they run at a usable speed in debug builds too (the Swift version ran 10x slower unoptimised).
// Numbers are little-endian arrays of 64-bit limbs. The functions only compute; the caller checks sizes.
#ifndef CMONTGOMERY_H
#define CMONTGOMERY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Limbs of scratch space `cmont_power` needs for a modulus of `k` limbs.
size_t cmont_scratch_limbs(size_t k);

/// out = a * b * R^-1 mod n (R = 2^(64k)) for a, b < n, n odd; `n0` = -n^-1 mod 2^64; `t` holds k + 2 limbs.
/// No branch or memory access depends on the values. `out` may be `a` or `b`.
void cmont_multiply(uint64_t *out, const uint64_t *a, const uint64_t *b, const uint64_t *n, uint64_t n0, size_t k,
                    uint64_t *t);

/// out = base^exponent mod n, with base < n and `r2` = R^2 mod n, over `exponent_limbs` limbs of exponent with a
/// fixed 4-bit window. With `secret` nonzero every window multiplies (by 1 for a zero digit) and the table entry is
/// read by scanning all 16, so neither the operations nor the memory touched depend on the exponent; otherwise zero
/// digits are skipped. `scratch` holds `cmont_scratch_limbs(k)` limbs and is wiped before returning.
void cmont_power(uint64_t *out, const uint64_t *base, const uint64_t *exponent, size_t exponent_limbs,
                 const uint64_t *n, uint64_t n0, const uint64_t *r2, size_t k, int secret, uint64_t *scratch);

#ifdef __cplusplus
}
#endif

#endif
