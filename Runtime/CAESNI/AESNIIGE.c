// AES-IGE on AES-NI: key expansion with AESKEYGENASSIST/AESIMC and the IGE chain with AESENC/AESDEC. Everything
// key- or data-dependent runs in those instructions and XORs: no branch or table lookup depends on a secret
// (loops depend only on the public length and key size). Round keys live in one schedule that is wiped before
// return, and the vector registers are cleared after the work. Compiled per function for "aes,sse2" (no global
// flags, so the package stays usable as a dependency); callers must check `caesni_available` first, and the
// public functions check it again so a CPU without AES-NI gets an error instead of SIGILL.
#include "CAESNI.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define CAESNI_X86 1
#include <cpuid.h>
#include <immintrin.h>
#include <string.h>
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

/// Zeroes memory so the optimizer cannot drop it: the asm statement claims to read the buffer.
static void wipe(void *pointer, size_t count) {
    memset(pointer, 0, count);
    __asm__ __volatile__("" : : "r"(pointer) : "memory");
}

// The optimizer may spill round keys to stack slots of its own, outside the schedule `wipe` clears. After the work
// returns, a call of the same depth overwrites that stack: `run`'s frame is under 200 bytes optimized and about 5 KiB
// at -O0 (debug builds), where every intermediate lives on the stack.
#ifdef __OPTIMIZE__
#define BURN_BYTES 1024
#else
#define BURN_BYTES 8192
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

AES_INLINE void chain(const schedule *s, int rounds, int decrypt, const uint8_t *iv,
                      const uint8_t *input, uint8_t *output, size_t length) {
    __m128i y_prev = _mm_loadu_si128((const __m128i *)(decrypt ? iv + 16 : iv));
    __m128i x_prev = _mm_loadu_si128((const __m128i *)(decrypt ? iv : iv + 16));
    for (size_t offset = 0; offset < length; offset += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(input + offset));
        __m128i last = _mm_xor_si128(s->key[rounds], x_prev);
        __m128i state = _mm_xor_si128(y_prev, off_chain(_mm_xor_si128(x, s->key[0])));
        for (int r = 1; r < rounds; r++) {
            state = decrypt ? _mm_aesdec_si128(state, s->key[r]) : _mm_aesenc_si128(state, s->key[r]);
        }
        y_prev = decrypt ? _mm_aesdeclast_si128(state, last) : _mm_aesenclast_si128(state, last);
        _mm_storeu_si128((__m128i *)(output + offset), y_prev);
        x_prev = x;
    }
}

static __attribute__((noinline)) AES_TARGET void run(int decrypt, const uint8_t *key, size_t key_length,
                                                     const uint8_t *iv, const uint8_t *input, uint8_t *output,
                                                     size_t length) {
    schedule s;
    int rounds = expand_key(&s, key, key_length);
    if (decrypt) {
        invert_schedule(&s, rounds);
        if (rounds == 14) chain(&s, 14, 1, iv, input, output, length);
        else chain(&s, 10, 1, iv, input, output, length);
    } else {
        if (rounds == 14) chain(&s, 14, 0, iv, input, output, length);
        else chain(&s, 10, 0, iv, input, output, length);
    }
    wipe(&s, sizeof s);
}

/// CPUID once; 1 = available, 2 = not, 0 = not yet asked. A race only repeats the query.
static int cpu_state;

int caesni_available(void) {
    int state = __atomic_load_n(&cpu_state, __ATOMIC_RELAXED);
    if (state == 0) {
        unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
        int has = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_AES) && (edx & bit_SSE2);
        state = has ? 1 : 2;
        __atomic_store_n(&cpu_state, state, __ATOMIC_RELAXED);
    }
    return state == 1;
}

static int process(int decrypt, const uint8_t *key, size_t key_length, const uint8_t *iv,
                   const uint8_t *input, uint8_t *output, size_t length) {
    if (!caesni_available() || (key_length != 16 && key_length != 32) || length % 16 != 0) return -1;
    if (length == 0) return 0;
    run(decrypt, key, key_length, iv, input, output, length);
    burn_stack();
    clear_vector_registers();
    return 0;
}

#else

int caesni_available(void) { return 0; }

static int process(int decrypt, const uint8_t *key, size_t key_length, const uint8_t *iv,
                   const uint8_t *input, uint8_t *output, size_t length) {
    (void)decrypt; (void)key; (void)key_length; (void)iv; (void)input; (void)output; (void)length;
    return -1;
}

#endif

int caesni_ige_encrypt(const uint8_t *key, size_t key_length, const uint8_t *iv,
                       const uint8_t *input, uint8_t *output, size_t length) {
    return process(0, key, key_length, iv, input, output, length);
}

int caesni_ige_decrypt(const uint8_t *key, size_t key_length, const uint8_t *iv,
                       const uint8_t *input, uint8_t *output, size_t length) {
    return process(1, key, key_length, iv, input, output, length);
}
