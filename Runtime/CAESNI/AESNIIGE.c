// AES-IGE on AES-NI: key expansion with AESKEYGENASSIST/AESIMC and the IGE chain with AESENC/AESDEC; and IGE
// decryption fused with SHA-256 on the SHA extensions (MTProto 2.0 hashes every plaintext it decrypts). Everything
// key- or data-dependent runs in those instructions, XORs and additions: no branch or table lookup depends on a secret
// (loops depend only on the public length and key size). Round keys live in one schedule that is wiped before
// return, and the vector registers are cleared after the work. Compiled per function for "aes,sse2" (the fused loop
// also "sha,sse4.1,ssse3"; no global flags, so the package stays usable as a dependency); callers must check
// `caesni_available` (`caesni_sha_available`) first, and the public functions check it again so a CPU without the
// instructions gets an error instead of SIGILL.
#include "CAESNI.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define CAESNI_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define CAESNI_X86 0
#endif

#if CAESNI_X86

#define AES_TARGET __attribute__((target("aes,sse2")))
#define AES_INLINE static inline __attribute__((always_inline)) AES_TARGET

/// Round keys for AES-128 (10 rounds) or AES-256 (14 rounds); `key[0]` is the whitening key.
typedef struct {
    __m128i key[15];
} schedule;

// No libc call may run while round keys sit in vector registers: the first call through a lazily bound PLT entry
// enters the dynamic linker's resolver, which saves every vector register on the stack (XSAVE, ~2.7 KiB with
// AVX-512), below anything `burn_stack` clears. Measured: with `memset` here, Tests/CAESNIChecks found 1-3 round
// keys per call at -O2 on an AVX-512 host, and none with LD_BIND_NOW=1. So the copies and fills are string
// instructions written inline; they touch no vector register either.

/// Zeroes `count` bytes at `pointer` (REP STOSB); the optimizer cannot drop it, the asm writes memory.
static inline void wipe(void *pointer, size_t count) {
    __asm__ __volatile__("rep stosb" : "+D"(pointer), "+c"(count) : "a"(0) : "memory");
}

/// Copies `count` bytes from `source` to a non-overlapping `target` (REP MOVSB).
static inline void copy_bytes(void *target, const void *source, size_t count) {
    __asm__ __volatile__("rep movsb" : "+D"(target), "+S"(source), "+c"(count) : : "memory");
}

// The optimizer may spill round keys to stack slots of its own, outside the schedule `wipe` clears. After the work
// returns, a call of the same depth overwrites that stack: `run`'s frame is under 200 bytes optimized and about 5 KiB
// at -O0 (debug builds), where every intermediate lives on the stack; `run_fused`'s about 700 bytes and 16 KiB.
#ifdef __OPTIMIZE__
#define BURN_BYTES 1024
#else
#define BURN_BYTES 32768
#endif

static __attribute__((noinline)) void burn_stack(void) {
    unsigned char area[BURN_BYTES];
    wipe(area, sizeof area);
}

/// Clears the vector registers the AES code may have left key or data material in. They are caller-saved
/// (System V), so clobbering them is legal; the compiler saves any it still needs.
static inline void clear_vector_registers(void) {
#if defined(__x86_64__)
    __asm__ __volatile__(
        "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\tpxor %%xmm3, %%xmm3\n\t"
        "pxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\tpxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\t"
        "pxor %%xmm8, %%xmm8\n\tpxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
        "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\tpxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15"
        ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
            "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#else
    __asm__ __volatile__(
        "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\tpxor %%xmm3, %%xmm3\n\t"
        "pxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\tpxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7"
        ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7");
#endif
}

/// One key-schedule step (FIPS-197 §5.2): each word of `previous` XORed into all later words (a prefix XOR in two
/// shifts), then the SubWord/RotWord/Rcon word `assist` broadcast into all four.
AES_INLINE __m128i schedule_step(__m128i previous, __m128i assist) {
    previous = _mm_xor_si128(previous, _mm_slli_si128(previous, 4));
    previous = _mm_xor_si128(previous, _mm_slli_si128(previous, 8));
    return _mm_xor_si128(previous, assist);
}

// AESKEYGENASSIST takes its Rcon as an immediate, hence macros. Lane 3 (0xff) is RotWord(SubWord(w3)) ^ Rcon, for
// a step that starts a new key; lane 2 (0xaa) is SubWord(w3), for AES-256's in-between step.
#define EXPAND(s, i, back, rcon, lane) \
    (s)->key[i] = schedule_step((s)->key[(i) - (back)], \
                                _mm_shuffle_epi32(_mm_aeskeygenassist_si128((s)->key[(i) - 1], rcon), lane))

/// The encryption schedule of a 16- or 32-byte key; returns the number of rounds.
static AES_TARGET int expand_key(schedule *s, const uint8_t *key, size_t key_length) {
    s->key[0] = _mm_loadu_si128((const __m128i *)key);
    if (key_length == 16) {
        EXPAND(s, 1, 1, 0x01, 0xff); EXPAND(s, 2, 1, 0x02, 0xff); EXPAND(s, 3, 1, 0x04, 0xff);
        EXPAND(s, 4, 1, 0x08, 0xff); EXPAND(s, 5, 1, 0x10, 0xff); EXPAND(s, 6, 1, 0x20, 0xff);
        EXPAND(s, 7, 1, 0x40, 0xff); EXPAND(s, 8, 1, 0x80, 0xff); EXPAND(s, 9, 1, 0x1b, 0xff);
        EXPAND(s, 10, 1, 0x36, 0xff);
        return 10;
    }
    s->key[1] = _mm_loadu_si128((const __m128i *)(key + 16));
    EXPAND(s, 2, 2, 0x01, 0xff); EXPAND(s, 3, 2, 0x00, 0xaa); EXPAND(s, 4, 2, 0x02, 0xff);
    EXPAND(s, 5, 2, 0x00, 0xaa); EXPAND(s, 6, 2, 0x04, 0xff); EXPAND(s, 7, 2, 0x00, 0xaa);
    EXPAND(s, 8, 2, 0x08, 0xff); EXPAND(s, 9, 2, 0x00, 0xaa); EXPAND(s, 10, 2, 0x10, 0xff);
    EXPAND(s, 11, 2, 0x00, 0xaa); EXPAND(s, 12, 2, 0x20, 0xff); EXPAND(s, 13, 2, 0x00, 0xaa);
    EXPAND(s, 14, 2, 0x40, 0xff);
    return 14;
}

/// Turns an encryption schedule into the equivalent inverse cipher's (FIPS-197 §5.3.5): keys in reverse order,
/// InvMixColumns (AESIMC) applied to all but the first and last.
static AES_TARGET void invert_schedule(schedule *s, int rounds) {
    for (int i = 0, j = rounds; i < j; i++, j--) {
        __m128i t = s->key[i];
        s->key[i] = s->key[j];
        s->key[j] = t;
    }
    for (int i = 1; i < rounds; i++) s->key[i] = _mm_aesimc_si128(s->key[i]);
}

// Both directions are one recurrence, y_i = F(x_i ^ y_{i-1}) ^ x_{i-1}: encryption with x = p, y = c, F = E and
// y_0 = c_0 (the IV's first half); decryption with x = c, y = p, F = D and y_0 = p_0 (its second half).
//
// The chain's critical path is one XOR and the AES rounds, as in CBC: the whitening key is XORed into x_i off
// the path (y_{i-1} ^ (x_i ^ k_0)), and the final XOR with x_{i-1} is folded into the last round's key (AESENCLAST
// and AESDECLAST end with an XOR by their key operand). `decrypt` and `rounds` are constants at each call, so the
// direction is chosen at compile time and the round loop unrolls.

/// `value`, hidden from the optimizer, so it cannot re-associate `y_{i-1} ^ (x_i ^ k_0)` into a form with two XORs
/// on the chain.
AES_INLINE __m128i off_chain(__m128i value) {
    __asm__("" : "+x"(value));
    return value;
}

/// One step of the chain: 16 bytes from `input` to `output`, carrying y_{i-1} and x_{i-1}.
AES_INLINE void ige_block(const schedule *s, int rounds, int decrypt, __m128i *y_prev, __m128i *x_prev,
                          const uint8_t *input, uint8_t *output) {
    __m128i x = _mm_loadu_si128((const __m128i *)input);
    __m128i last = _mm_xor_si128(s->key[rounds], *x_prev);
    __m128i state = _mm_xor_si128(*y_prev, off_chain(_mm_xor_si128(x, s->key[0])));
    for (int r = 1; r < rounds; r++) {
        state = decrypt ? _mm_aesdec_si128(state, s->key[r]) : _mm_aesenc_si128(state, s->key[r]);
    }
    *y_prev = decrypt ? _mm_aesdeclast_si128(state, last) : _mm_aesenclast_si128(state, last);
    _mm_storeu_si128((__m128i *)output, *y_prev);
    *x_prev = x;
}

AES_INLINE void chain(const schedule *s, int rounds, int decrypt, const uint8_t *iv,
                      const uint8_t *input, uint8_t *output, size_t length) {
    __m128i y_prev = _mm_loadu_si128((const __m128i *)(decrypt ? iv + 16 : iv));
    __m128i x_prev = _mm_loadu_si128((const __m128i *)(decrypt ? iv : iv + 16));
    for (size_t offset = 0; offset < length; offset += 16) {
        ige_block(s, rounds, decrypt, &y_prev, &x_prev, input + offset, output + offset);
    }
}

/// What CPUID reports, asked once: FEATURES_KNOWN | FEATURE_AES (AES-NI and SSE2, leaf 1) | FEATURE_SHA (the SHA
/// extensions, leaf 7 EBX bit 29, with SSSE3 and SSE4.1 from leaf 1). 0 = not yet asked; a race only repeats it.
enum { FEATURES_KNOWN = 1, FEATURE_AES = 2, FEATURE_SHA = 4 };
static int cpu_features;

static int features(void) {
    int known = __atomic_load_n(&cpu_features, __ATOMIC_RELAXED);
    if (known == 0) {
        unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
        known = FEATURES_KNOWN;
        if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_AES) && (edx & bit_SSE2)) {
            known |= FEATURE_AES;
            int ssse3_sse41 = (ecx & bit_SSSE3) && (ecx & bit_SSE4_1);
            if (ssse3_sse41 && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_SHA)) {
                known |= FEATURE_SHA;
            }
        }
        __atomic_store_n(&cpu_features, known, __ATOMIC_RELAXED);
    }
    return known;
}

int caesni_available(void) { return (features() & FEATURE_AES) != 0; }

int caesni_sha_available(void) { return (features() & FEATURE_SHA) != 0; }

// ---- SHA-256 on the SHA extensions, interleaved with IGE decryption or encryption ----

#define SHA_TARGET __attribute__((target("sha,sse4.1,ssse3,aes,sse2")))
#define SHA_INLINE static inline __attribute__((always_inline)) SHA_TARGET

/// FIPS 180-4 §4.2.2: the 64 round constants (public, indexed by round number only).
static const uint32_t sha256_k[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/// Reverses the bytes of each 32-bit word (SHA-256's words are big-endian).
#define WORD_BYTE_SWAP _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL)

/// The running hash as SHA256RNDS2 wants it: words A, B, E, F in one register and C, D, G, H in the other.
typedef struct {
    __m128i abef, cdgh;
} sha_state;

/// FIPS 180-4 §5.3.3's initial hash value, rearranged into the two registers.
SHA_INLINE sha_state sha_start(void) {
    __m128i abcd = _mm_set_epi32(0xa54ff53a, 0x3c6ef372, 0xbb67ae85, 0x6a09e667);
    __m128i efgh = _mm_set_epi32(0x5be0cd19, 0x1f83d9ab, 0x9b05688c, 0x510e527f);
    __m128i cdab = _mm_shuffle_epi32(abcd, 0xb1);
    __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1b);
    sha_state s = { _mm_alignr_epi8(cdab, hgfe, 8), _mm_blend_epi16(hgfe, cdab, 0xf0) };
    return s;
}

/// One group of the message schedule and four rounds of block `hblock` (rounds 4i…4i+3), on `abef`, `cdgh` and
/// `w[4]`, the schedule four words at a time with SHA256MSG1/MSG2 and two rounds per SHA256RNDS2. `i` is a constant
/// (or an index of a loop that unrolls), so `w[i & 3]` stays in registers.
#define SHA_GROUP(i) do { \
        if ((i) < 4) { \
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(hblock + 16 * (i))), WORD_BYTE_SWAP); \
        } else { \
            __m128i t_ = _mm_sha256msg1_epu32(w[((i) - 4) & 3], w[((i) - 3) & 3]); \
            t_ = _mm_add_epi32(t_, _mm_alignr_epi8(w[((i) - 1) & 3], w[((i) - 2) & 3], 4)); \
            w[(i) & 3] = _mm_sha256msg2_epu32(t_, w[((i) - 1) & 3]); \
        } \
        __m128i k_ = _mm_add_epi32(w[(i) & 3], _mm_load_si128((const __m128i *)(sha256_k + 4 * (i)))); \
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k_); \
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k_, 0x0e)); \
    } while (0)

/// One 64-byte block (§6.2.2).
SHA_INLINE void sha_block(sha_state *s, const uint8_t *hblock) {
    __m128i abef = s->abef, cdgh = s->cdgh, w[4];
    for (int i = 0; i < 16; i++) SHA_GROUP(i);
    s->abef = _mm_add_epi32(s->abef, abef);
    s->cdgh = _mm_add_epi32(s->cdgh, cdgh);
}

/// The digest, big-endian words H0…H7 (§6.2.2 step 4).
SHA_INLINE void sha_digest(const sha_state *s, uint8_t *digest) {
    const __m128i swap = WORD_BYTE_SWAP;
    __m128i feba = _mm_shuffle_epi32(s->abef, 0x1b);
    __m128i dchg = _mm_shuffle_epi32(s->cdgh, 0xb1);
    __m128i dcba = _mm_blend_epi16(feba, dchg, 0xf0);
    __m128i hgfe = _mm_alignr_epi8(dchg, feba, 8);
    _mm_storeu_si128((__m128i *)digest, _mm_shuffle_epi8(dcba, swap));
    _mm_storeu_si128((__m128i *)(digest + 16), _mm_shuffle_epi8(hgfe, swap));
}

/// Three AES rounds (`r`, r+1, r+2) of `state`, then round group `g` of the hash block when hashing.
#define AES_ROUND(state, k) (decrypt ? _mm_aesdec_si128(state, k) : _mm_aesenc_si128(state, k))
#define ROUNDS_THEN_GROUP(r, g) do { \
        state = AES_ROUND(state, s->key[r]); \
        state = AES_ROUND(state, s->key[(r) + 1]); \
        state = AES_ROUND(state, s->key[(r) + 2]); \
        if (hash) SHA_GROUP(g); \
    } while (0)

/// IGE block `j` of the chunk with hash groups 4j…4j+3 after its rounds 3, 6, 9 and 12.
#define FUSED_BLOCK(j) do { \
        __m128i x = _mm_loadu_si128((const __m128i *)(input + 16 * (j))); \
        __m128i last = _mm_xor_si128(s->key[14], *x_prev); \
        __m128i state = _mm_xor_si128(*y_prev, off_chain(_mm_xor_si128(x, s->key[0]))); \
        ROUNDS_THEN_GROUP(1, 4 * (j)); \
        ROUNDS_THEN_GROUP(4, 4 * (j) + 1); \
        ROUNDS_THEN_GROUP(7, 4 * (j) + 2); \
        ROUNDS_THEN_GROUP(10, 4 * (j) + 3); \
        state = AES_ROUND(state, s->key[13]); \
        *y_prev = decrypt ? _mm_aesdeclast_si128(state, last) : _mm_aesenclast_si128(state, last); \
        _mm_storeu_si128((__m128i *)(output + 16 * (j)), *y_prev); \
        *x_prev = x; \
    } while (0)

/// Decrypts (`decrypt`, a constant) or encrypts 64 bytes (four IGE blocks, AES-256, the chain as in `chain`) and,
/// when `hash` (a constant), compresses the 64-byte hash block `hblock` in between: four of its sixteen round
/// groups inside each AES block, so both dependency chains are in flight at once (each alone leaves the vector
/// units mostly waiting).
SHA_INLINE void fused_chunk(const schedule *s, int decrypt, __m128i *y_prev, __m128i *x_prev, const uint8_t *input,
                            uint8_t *output, int hash, sha_state *h, const uint8_t *hblock) {
    __m128i abef = h->abef, cdgh = h->cdgh, w[4];
    FUSED_BLOCK(0);
    FUSED_BLOCK(1);
    FUSED_BLOCK(2);
    FUSED_BLOCK(3);
    if (hash) {
        h->abef = _mm_add_epi32(h->abef, abef);
        h->cdgh = _mm_add_epi32(h->cdgh, cdgh);
    }
}

#include "HashStaging.h"

/// IGE decryption (AES-256) of `length` bytes with SHA-256 over `prefix ‖ plaintext` (prefix at most 64 bytes) in
/// the same pass. Hash block h (input bytes 64h…64h+63) is whole once plaintext chunk h (bytes 64h…64h+63) is out,
/// so chunk c is decrypted while block c−1 is compressed. `staging` (128 bytes) takes the blocks that mix prefix
/// and plaintext or carry the padding; the caller wipes it.
static __attribute__((noinline)) SHA_TARGET void run_fused(const uint8_t *key, const uint8_t *iv,
                                                           const uint8_t *prefix, size_t prefix_length,
                                                           const uint8_t *input, uint8_t *output, size_t length,
                                                           uint8_t *staging, uint8_t *digest) {
    schedule s;
    expand_key(&s, key, 32);
    invert_schedule(&s, 14);
    sha_state h = sha_start();
    __m128i y_prev = _mm_loadu_si128((const __m128i *)(iv + 16));
    __m128i x_prev = _mm_loadu_si128((const __m128i *)iv);
    size_t chunks = length / 64, hashed = 0;
    for (size_t c = 0; c < chunks; c++) {
        if (c == 0) {
            fused_chunk(&s, 1, &y_prev, &x_prev, input, output, 0, &h, NULL);
            stage_first_block(staging, prefix, prefix_length, output, length);
        } else {
            const uint8_t *hblock = hash_block(staging, output, prefix_length, c - 1);
            fused_chunk(&s, 1, &y_prev, &x_prev, input + 64 * c, output + 64 * c, 1, &h, hblock);
            hashed += 64;
        }
    }
    for (size_t offset = 64 * chunks; offset < length; offset += 16) {
        ige_block(&s, 14, 1, &y_prev, &x_prev, input + offset, output + offset);
    }
    if (chunks == 0) stage_first_block(staging, prefix, prefix_length, output, length);
    sha_finish(&h, staging, output, prefix_length, hashed, prefix_length + length, digest);
    wipe(&s, sizeof s);
}

/// IGE encryption (AES-256) of `length` bytes while hashing `prefix ‖ next` (prefix at most 64 bytes), a separate
/// buffer: MTProto 2.0's sender must hash a message before it can encrypt it (the AES key comes from the hash), so
/// a sender with several messages encrypts one while hashing the next. Hash block h is compressed inside chunk h
/// of the encryption; whichever work is longer finishes alone. `staging` as for `run_fused`.
static __attribute__((noinline)) SHA_TARGET void run_encrypt_hashing(const uint8_t *key, const uint8_t *iv,
                                                                     const uint8_t *input, uint8_t *output,
                                                                     size_t length, const uint8_t *prefix,
                                                                     size_t prefix_length, const uint8_t *next,
                                                                     size_t next_length, uint8_t *staging,
                                                                     uint8_t *digest) {
    schedule s;
    expand_key(&s, key, 32);
    sha_state h = sha_start();
    __m128i y_prev = _mm_loadu_si128((const __m128i *)iv);
    __m128i x_prev = _mm_loadu_si128((const __m128i *)(iv + 16));
    size_t chunks = length / 64, total = prefix_length + next_length, hashed = 0;
    stage_first_block(staging, prefix, prefix_length, next, next_length);
    for (size_t c = 0; c < chunks; c++) {
        if (total - hashed >= 64) {
            const uint8_t *hblock = hash_block(staging, next, prefix_length, hashed / 64);
            fused_chunk(&s, 0, &y_prev, &x_prev, input + 64 * c, output + 64 * c, 1, &h, hblock);
            hashed += 64;
        } else {
            fused_chunk(&s, 0, &y_prev, &x_prev, input + 64 * c, output + 64 * c, 0, &h, NULL);
        }
    }
    for (size_t offset = 64 * chunks; offset < length; offset += 16) {
        ige_block(&s, 14, 0, &y_prev, &x_prev, input + offset, output + offset);
    }
    sha_finish(&h, staging, next, prefix_length, hashed, total, digest);
    wipe(&s, sizeof s);
}

#include "EntryPoints.h"

#elif !defined(__aarch64__)
// Neither x86 nor ARM64 (ARMv8IGE.c): every entry point reports the loop unavailable.

int caesni_available(void) { return 0; }

int caesni_sha_available(void) { return 0; }

int caesni_ige_decrypt_sha256(const uint8_t *key, const uint8_t *iv, const uint8_t *prefix, size_t prefix_length,
                              const uint8_t *input, uint8_t *output, size_t length, uint8_t *digest) {
    (void)key; (void)iv; (void)prefix; (void)prefix_length; (void)input; (void)output; (void)length; (void)digest;
    return -1;
}

int caesni_ige_encrypt_sha256(const uint8_t *key, const uint8_t *iv, const uint8_t *input, uint8_t *output,
                              size_t length, const uint8_t *prefix, size_t prefix_length, const uint8_t *next,
                              size_t next_length, uint8_t *digest) {
    (void)key; (void)iv; (void)input; (void)output; (void)length; (void)prefix; (void)prefix_length; (void)next;
    (void)next_length; (void)digest;
    return -1;
}

int caesni_ige_encrypt(const uint8_t *key, size_t key_length, const uint8_t *iv,
                       const uint8_t *input, uint8_t *output, size_t length) {
    (void)key; (void)key_length; (void)iv; (void)input; (void)output; (void)length;
    return -1;
}

int caesni_ige_decrypt(const uint8_t *key, size_t key_length, const uint8_t *iv,
                       const uint8_t *input, uint8_t *output, size_t length) {
    (void)key; (void)key_length; (void)iv; (void)input; (void)output; (void)length;
    return -1;
}

#endif
