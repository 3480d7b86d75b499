// Montgomery arithmetic (CIOS: multiply and reduce one limb at a time) and a fixed-window exponentiation over it.
// See include/CMontgomery.h for the contract.
#include "CMontgomery.h"

#include <string.h>

// (hi, lo) = a * b + c + d, which cannot overflow 128 bits. A macro, not a function: debug builds (-O0) call
// even `static inline` functions, which doubled the time of an exponentiation.
#if defined(__SIZEOF_INT128__)
#define MULTIPLY_ADD(a, b, c, d, hi, lo) do { \
        unsigned __int128 product_ = (unsigned __int128)(a) * (b) + (c) + (d); \
        (hi) = (uint64_t)(product_ >> 64); \
        (lo) = (uint64_t)product_; \
    } while (0)
#else
// Four 32x32 products where the compiler has no 128-bit type (32-bit targets).
static void multiply_add_32(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t *hi, uint64_t *lo) {
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t middle = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    uint64_t low = (middle << 32) | (p00 & 0xffffffffu);
    uint64_t high = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
    uint64_t sum = low + c;
    high += sum < c;
    uint64_t total = sum + d;
    high += total < d;
    *hi = high;
    *lo = total;
}
#define MULTIPLY_ADD(a, b, c, d, hi, lo) multiply_add_32((a), (b), (c), (d), &(hi), &(lo))
#endif

size_t cmont_scratch_limbs(size_t k) { return 16 * k + 3 * k + (k + 2); }

void cmont_multiply(uint64_t *out, const uint64_t *a, const uint64_t *b, const uint64_t *n, uint64_t n0, size_t k,
                    uint64_t *t) {
    memset(t, 0, (k + 2) * sizeof(uint64_t));
    for (size_t i = 0; i < k; i++) {
        uint64_t carry = 0, bi = b[i];
        for (size_t j = 0; j < k; j++) MULTIPLY_ADD(a[j], bi, t[j], carry, carry, t[j]);
        uint64_t sum = t[k] + carry;
        t[k + 1] = sum < carry;
        t[k] = sum;
        uint64_t m = t[0] * n0, discard;
        MULTIPLY_ADD(m, n[0], t[0], 0, carry, discard);
        (void)discard;
        for (size_t j = 1; j < k; j++) MULTIPLY_ADD(m, n[j], t[j], carry, carry, t[j - 1]);
        sum = t[k] + carry;
        t[k - 1] = sum;
        t[k] = t[k + 1] + (sum < carry);
    }
    // t < 2n: out = t - n, kept unless that borrows past t's top limb (then t < n and t itself is the answer).
    uint64_t borrow = 0;
    for (size_t j = 0; j < k; j++) {
        uint64_t difference = t[j] - n[j];
        uint64_t borrow1 = t[j] < n[j];
        uint64_t result = difference - borrow;
        uint64_t borrow2 = difference < borrow;
        borrow = borrow1 | borrow2;
        out[j] = result;
    }
    uint64_t keep = 0 - (uint64_t)(t[k] < borrow);  // all ones when t < n
    for (size_t j = 0; j < k; j++) out[j] = (t[j] & keep) | (out[j] & ~keep);
}

void cmont_power(uint64_t *out, const uint64_t *base, const uint64_t *exponent, size_t exponent_limbs,
                 const uint64_t *n, uint64_t n0, const uint64_t *r2, size_t k, int secret, uint64_t *scratch) {
    uint64_t *table = scratch, *accumulator = table + 16 * k, *entry = accumulator + k, *one = entry + k;
    uint64_t *t = one + k;
    memset(one, 0, k * sizeof(uint64_t));
    one[0] = 1;
    cmont_multiply(table, r2, one, n, n0, k, t);                // 1 in Montgomery form
    cmont_multiply(table + k, base, r2, n, n0, k, t);           // base in Montgomery form
    for (size_t i = 2; i < 16; i++) cmont_multiply(table + i * k, table + (i - 1) * k, table + k, n, n0, k, t);
    memcpy(accumulator, table, k * sizeof(uint64_t));
    for (size_t limb = exponent_limbs; limb-- > 0;) {
        for (int shift = 60; shift >= 0; shift -= 4) {
            for (int s = 0; s < 4; s++) cmont_multiply(accumulator, accumulator, accumulator, n, n0, k, t);
            uint64_t digit = (exponent[limb] >> shift) & 0xf;
            if (secret) {
                memset(entry, 0, k * sizeof(uint64_t));
                for (uint64_t i = 0; i < 16; i++) {
                    uint64_t difference = i ^ digit;
                    uint64_t mask = ((difference | (0 - difference)) >> 63) - 1;  // all ones when i == digit
                    for (size_t j = 0; j < k; j++) entry[j] |= table[i * k + j] & mask;
                }
                cmont_multiply(accumulator, accumulator, entry, n, n0, k, t);
            } else if (digit != 0) {
                cmont_multiply(accumulator, accumulator, table + digit * k, n, n0, k, t);
            }
        }
    }
    cmont_multiply(out, accumulator, one, n, n0, k, t);         // out of Montgomery form
    // The table and accumulator are powers of a secret-dependent value; leave none of them behind.
    volatile uint64_t *wipe = scratch;
    for (size_t i = 0; i < cmont_scratch_limbs(k); i++) wipe[i] = 0;
}
