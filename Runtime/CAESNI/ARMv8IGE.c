// AES-IGE on the ARMv8 Cryptography Extensions (AESE/AESMC, AESD/AESIMC), and the same loops fused with SHA-256 on
// SHA256H/H2/SU0/SU1: the ARM64 counterpart of AESNIIGE.c, behind the same entry points (CAESNI.h). As there, no
// branch or table lookup depends on a secret: SubWord in the key expansion is AESE with a zero round key on a word
// broadcast to all four columns (ShiftRows then moves nothing), and the chain is XORs and AES instructions. The
// schedule is wiped before return, the stack below the call burnt, and the vector registers cleared.
//
// Where the instructions exist: Apple's ARM64 CPUs all have them (chosen at compile time); on Linux a CPU may lack
// them, so the kernel's hardware capabilities (getauxval AT_HWCAP: HWCAP_AES, HWCAP_SHA2) decide at run time.
// Compiled per function for the extensions (no global flags, so the package stays usable as a dependency).
#include "CAESNI.h"

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define CAESNI_ARM64 1
#include <arm_neon.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif

#if defined(__clang__)
#define AES_TARGET __attribute__((target("aes,sha2")))
#else
#define AES_TARGET __attribute__((target("+crypto")))
#endif
#define AES_INLINE static inline __attribute__((always_inline)) AES_TARGET
#define SHA_INLINE AES_INLINE

/// Round keys for AES-128 (10 rounds) or AES-256 (14 rounds); `key[0]` is the first AddRoundKey's.
typedef struct {
    uint8x16_t key[15];
} schedule;

/// Zeroes `count` bytes at `pointer` through a volatile pointer (no libc call, which a lazily bound PLT entry would
/// turn into the dynamic linker's resolver saving every vector register on the stack).
static inline void wipe(void *pointer, size_t count) {
    volatile uint8_t *bytes = pointer;
    for (size_t i = 0; i < count; i++) bytes[i] = 0;
}

static inline void copy_bytes(void *target, const void *source, size_t count) {
    uint8_t *to = target;
    const uint8_t *from = source;
    for (size_t i = 0; i < count; i++) to[i] = from[i];
}

// The optimizer may spill round keys to stack slots outside the schedule; a call of the same depth afterwards
// overwrites them (frames are a few hundred bytes optimized, several KiB at -O0).
#ifdef __OPTIMIZE__
#define BURN_BYTES 1024
#else
#define BURN_BYTES 32768
#endif

static __attribute__((noinline)) void burn_stack(void) {
    unsigned char area[BURN_BYTES];
    wipe(area, sizeof area);
    __asm__ __volatile__("" : : "r"(area) : "memory");
}

/// Clears v0-v31. v8-v15's low halves are callee-saved (AAPCS64): the clobbers make the compiler save and restore
/// them around this, which is legal and leaves no key in them.
static inline void clear_vector_registers(void) {
    __asm__ __volatile__(
        "movi v0.16b, #0\n\tmovi v1.16b, #0\n\tmovi v2.16b, #0\n\tmovi v3.16b, #0\n\t"
        "movi v4.16b, #0\n\tmovi v5.16b, #0\n\tmovi v6.16b, #0\n\tmovi v7.16b, #0\n\t"
        "movi v16.16b, #0\n\tmovi v17.16b, #0\n\tmovi v18.16b, #0\n\tmovi v19.16b, #0\n\t"
        "movi v20.16b, #0\n\tmovi v21.16b, #0\n\tmovi v22.16b, #0\n\tmovi v23.16b, #0\n\t"
        "movi v24.16b, #0\n\tmovi v25.16b, #0\n\tmovi v26.16b, #0\n\tmovi v27.16b, #0\n\t"
        "movi v28.16b, #0\n\tmovi v29.16b, #0\n\tmovi v30.16b, #0\n\tmovi v31.16b, #0"
        ::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21", "v22",
            "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31");
}

/// SubWord (FIPS-197 §5.2) of a little-endian word: AESE with a zero key on the word in all four columns.
AES_INLINE uint32_t sub_word(uint32_t word) {
    uint8x16_t state = vaeseq_u8(vreinterpretq_u8_u32(vdupq_n_u32(word)), vdupq_n_u8(0));
    return vgetq_lane_u32(vreinterpretq_u32_u8(state), 0);
}

/// The encryption schedule of a 16- or 32-byte key (§5.2, words little-endian); returns the number of rounds.
static AES_TARGET int expand_key(schedule *s, const uint8_t *key, size_t key_length) {
    static const uint8_t rcon[10] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36};
    uint32_t words[60];
    size_t nk = key_length / 4;
    int rounds = key_length == 16 ? 10 : 14;
    size_t total = 4 * (size_t)(rounds + 1);
    copy_bytes(words, key, key_length);
    for (size_t i = nk; i < total; i++) {
        uint32_t t = words[i - 1];
        if (i % nk == 0) {
            t = sub_word((t >> 8) | (t << 24)) ^ rcon[i / nk - 1];   // RotWord, SubWord, Rcon
        } else if (nk == 8 && i % nk == 4) {
            t = sub_word(t);
        }
        words[i] = words[i - nk] ^ t;
    }
    for (int r = 0; r <= rounds; r++) s->key[r] = vld1q_u8((const uint8_t *)(words + 4 * r));
    wipe(words, sizeof words);
    return rounds;
}

/// The equivalent inverse cipher's schedule (§5.3.5): keys in reverse order, InvMixColumns on all but the ends.
static AES_TARGET void invert_schedule(schedule *s, int rounds) {
    for (int i = 0, j = rounds; i < j; i++, j--) {
        uint8x16_t t = s->key[i];
        s->key[i] = s->key[j];
        s->key[j] = t;
    }
    for (int i = 1; i < rounds; i++) s->key[i] = vaesimcq_u8(s->key[i]);
}

/// One block through the cipher. AESE/AESD XOR their key first, so round r's key enters at step r and the last
/// key is a plain XOR; `last` carries it already XORed with x_{i-1}, which takes IGE's final XOR off the chain.
AES_INLINE uint8x16_t cipher(const schedule *s, int rounds, int decrypt, uint8x16_t state, uint8x16_t last) {
    for (int r = 0; r < rounds - 1; r++) {
        state = decrypt ? vaesimcq_u8(vaesdq_u8(state, s->key[r])) : vaesmcq_u8(vaeseq_u8(state, s->key[r]));
    }
    state = decrypt ? vaesdq_u8(state, s->key[rounds - 1]) : vaeseq_u8(state, s->key[rounds - 1]);
    return veorq_u8(state, last);
}

// Both directions are y_i = F(x_i ^ y_{i-1}) ^ x_{i-1}: encryption with x = p, y = c, F = E, y_0 = c_0 (the IV's
// first half); decryption with x = c, y = p, F = D, y_0 = p_0 (its second half). As in AESNIIGE.c.
AES_INLINE void ige_block(const schedule *s, int rounds, int decrypt, uint8x16_t *y_prev, uint8x16_t *x_prev,
                          const uint8_t *input, uint8_t *output) {
    uint8x16_t x = vld1q_u8(input);
    uint8x16_t last = veorq_u8(s->key[rounds], *x_prev);
    *y_prev = cipher(s, rounds, decrypt, veorq_u8(x, *y_prev), last);
    vst1q_u8(output, *y_prev);
    *x_prev = x;
}

AES_INLINE void chain(const schedule *s, int rounds, int decrypt, const uint8_t *iv, const uint8_t *input,
                      uint8_t *output, size_t length) {
    uint8x16_t y_prev = vld1q_u8(decrypt ? iv + 16 : iv);
    uint8x16_t x_prev = vld1q_u8(decrypt ? iv : iv + 16);
    for (size_t offset = 0; offset < length; offset += 16) {
        ige_block(s, rounds, decrypt, &y_prev, &x_prev, input + offset, output + offset);
    }
}

// The capability bits of <asm/hwcap.h> for AArch64 (stable kernel ABI), spelled here so no kernel header is needed.
enum { ARM64_HWCAP_AES = 1 << 3, ARM64_HWCAP_SHA2 = 1 << 6 };
enum { FEATURES_KNOWN = 1, FEATURE_AES = 2, FEATURE_SHA = 4 };
static int cpu_features;

static int features(void) {
    int known = __atomic_load_n(&cpu_features, __ATOMIC_RELAXED);
    if (known == 0) {
        known = FEATURES_KNOWN;
#if defined(__APPLE__)
        known |= FEATURE_AES | FEATURE_SHA;   // every Apple ARM64 CPU has both
#elif defined(__linux__)
        unsigned long hwcap = getauxval(AT_HWCAP);
        if (hwcap & ARM64_HWCAP_AES) {
            known |= FEATURE_AES;
            if (hwcap & ARM64_HWCAP_SHA2) known |= FEATURE_SHA;
        }
#endif
        __atomic_store_n(&cpu_features, known, __ATOMIC_RELAXED);
    }
    return known;
}

int caesni_available(void) { return (features() & FEATURE_AES) != 0; }

int caesni_sha_available(void) { return (features() & FEATURE_SHA) != 0; }

// ---- SHA-256 (FIPS 180-4) on the SHA-2 instructions, in the same loop as the IGE chain ----

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/// H0…H3 and H4…H7, lane 0 first, as SHA256H/H2 take them.
typedef struct {
    uint32x4_t abcd, efgh;
} sha_state;

AES_INLINE sha_state sha_start(void) {
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    sha_state s = {vld1q_u32(initial), vld1q_u32(initial + 4)};
    return s;
}

/// One 64-byte block (§6.2.2): the schedule four words at a time, W[i] = SU1(SU0(W[i-4], W[i-3]), W[i-2], W[i-1]),
/// and four rounds per SHA256H/H2 pair.
AES_INLINE void sha_block(sha_state *s, const uint8_t *block) {
    uint32x4_t abcd = s->abcd, efgh = s->efgh, w[4];
    for (int i = 0; i < 16; i++) {
        if (i < 4) {
            w[i] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(block + 16 * i)));
        } else {
            w[i & 3] = vsha256su1q_u32(vsha256su0q_u32(w[i & 3], w[(i + 1) & 3]), w[(i + 2) & 3], w[(i + 3) & 3]);
        }
        uint32x4_t k = vaddq_u32(w[i & 3], vld1q_u32(sha256_k + 4 * i));
        uint32x4_t previous = abcd;
        abcd = vsha256hq_u32(abcd, efgh, k);
        efgh = vsha256h2q_u32(efgh, previous, k);
    }
    s->abcd = vaddq_u32(s->abcd, abcd);
    s->efgh = vaddq_u32(s->efgh, efgh);
}

AES_INLINE void sha_digest(const sha_state *s, uint8_t *digest) {
    vst1q_u8(digest, vrev32q_u8(vreinterpretq_u8_u32(s->abcd)));
    vst1q_u8(digest + 16, vrev32q_u8(vreinterpretq_u8_u32(s->efgh)));
}

/// Four IGE blocks (64 bytes, AES-256) and, when `hblock` is not null, one hash block: the two dependency chains are
/// independent, so the CPU runs them side by side.
AES_INLINE void fused_chunk(const schedule *s, int decrypt, uint8x16_t *y_prev, uint8x16_t *x_prev,
                            const uint8_t *input, uint8_t *output, sha_state *h, const uint8_t *hblock) {
    if (hblock) sha_block(h, hblock);
    for (int j = 0; j < 4; j++) ige_block(s, 14, decrypt, y_prev, x_prev, input + 16 * j, output + 16 * j);
}

#include "HashStaging.h"

/// Decryption with SHA-256 over `prefix ‖ plaintext`: chunk c is decrypted while hash block c−1 (whole once chunk
/// c−1 is out) is compressed.
static __attribute__((noinline)) AES_TARGET void run_fused(const uint8_t *key, const uint8_t *iv,
                                                           const uint8_t *prefix, size_t prefix_length,
                                                           const uint8_t *input, uint8_t *output, size_t length,
                                                           uint8_t *staging, uint8_t *digest) {
    schedule s;
    expand_key(&s, key, 32);
    invert_schedule(&s, 14);
    sha_state h = sha_start();
    uint8x16_t y_prev = vld1q_u8(iv + 16), x_prev = vld1q_u8(iv);
    size_t chunks = length / 64, hashed = 0;
    for (size_t c = 0; c < chunks; c++) {
        const uint8_t *hblock = c == 0 ? NULL : hash_block(staging, output, prefix_length, c - 1);
        fused_chunk(&s, 1, &y_prev, &x_prev, input + 64 * c, output + 64 * c, &h, hblock);
        if (c == 0) stage_first_block(staging, prefix, prefix_length, output, length);
        else hashed += 64;
    }
    for (size_t offset = 64 * chunks; offset < length; offset += 16) {
        ige_block(&s, 14, 1, &y_prev, &x_prev, input + offset, output + offset);
    }
    if (chunks == 0) stage_first_block(staging, prefix, prefix_length, output, length);
    sha_finish(&h, staging, output, prefix_length, hashed, prefix_length + length, digest);
    wipe(&s, sizeof s);
}

/// Encryption while hashing `prefix ‖ next`, a separate buffer (a sender encrypts one message while hashing the
/// next); whichever is longer finishes alone.
static __attribute__((noinline)) AES_TARGET void run_encrypt_hashing(const uint8_t *key, const uint8_t *iv,
                                                                     const uint8_t *input, uint8_t *output,
                                                                     size_t length, const uint8_t *prefix,
                                                                     size_t prefix_length, const uint8_t *next,
                                                                     size_t next_length, uint8_t *staging,
                                                                     uint8_t *digest) {
    schedule s;
    expand_key(&s, key, 32);
    sha_state h = sha_start();
    uint8x16_t y_prev = vld1q_u8(iv), x_prev = vld1q_u8(iv + 16);
    size_t chunks = length / 64, total = prefix_length + next_length, hashed = 0;
    stage_first_block(staging, prefix, prefix_length, next, next_length);
    for (size_t c = 0; c < chunks; c++) {
        const uint8_t *hblock = NULL;
        if (total - hashed >= 64) {
            hblock = hash_block(staging, next, prefix_length, hashed / 64);
            hashed += 64;
        }
        fused_chunk(&s, 0, &y_prev, &x_prev, input + 64 * c, output + 64 * c, &h, hblock);
    }
    for (size_t offset = 64 * chunks; offset < length; offset += 16) {
        ige_block(&s, 14, 0, &y_prev, &x_prev, input + offset, output + offset);
    }
    sha_finish(&h, staging, next, prefix_length, hashed, total, digest);
    wipe(&s, sizeof s);
}

#include "EntryPoints.h"

#else
// Not ARM64: AESNIIGE.c defines the entry points. ISO C wants a translation unit to declare something.
typedef int caesni_armv8_unused;
#endif
