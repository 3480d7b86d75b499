// UTF-8 validation 16 or 32 bytes at a time, after Keiser and Lemire, "Validating UTF-8 in less than one
// instruction per byte" (2021): three table lookups (PSHUFB) classify each byte together with the byte before it,
// and a check on the bytes two and three back finds where a continuation byte is required. The same step is
// compiled twice, per function, for "ssse3" (16 bytes) and "avx2" (32 bytes, about half the instructions per byte);
// no global flags. `cutf8_validate` checks the CPU first and takes the widest.
#include "CUTF8.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#include <string.h>

#define SSSE3_TARGET __attribute__((target("ssse3")))
#define AVX2_TARGET __attribute__((target("avx2")))

static int cpu_level = -1;  // -1 unknown, else CUTF8_NONE, CUTF8_SSSE3 or CUTF8_AVX2

// AVX2 needs the CPU's flag (CPUID leaf 7) and the OS saving the YMM registers (OSXSAVE, then XCR0 bits 1 and 2).
static int detect_level(void) {
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_SSSE3)) return CUTF8_NONE;
    if (!(ecx & bit_OSXSAVE)) return CUTF8_SSSE3;
    unsigned int xcr0_low = 0, xcr0_high = 0;
    __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    if ((xcr0_low & 0x6) != 0x6) return CUTF8_SSSE3;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ebx & bit_AVX2)) return CUTF8_SSSE3;
    return CUTF8_AVX2;
}

int cutf8_level(void) {
    int known = __atomic_load_n(&cpu_level, __ATOMIC_RELAXED);
    if (known < 0) {
        known = detect_level();
        __atomic_store_n(&cpu_level, known, __ATOMIC_RELAXED);
    }
    return known;
}

int cutf8_available(void) { return cutf8_level() >= CUTF8_SSSE3; }

// Error classes of a byte pair (b1, b2), b1 the byte before b2. Each class is a product of conditions on b1's high
// nibble, b1's low nibble and b2's high nibble, so a pair is in a class exactly when the three lookups all have its
// bit. TWO_CONTS is no error by itself: it must coincide with "b2 must continue a 3- or 4-byte sequence".
enum {
    TOO_SHORT = 0x01,       // a lead byte not followed by a continuation byte
    TOO_LONG = 0x02,        // an ASCII byte followed by a continuation byte
    OVERLONG_3 = 0x04,      // E0 80..9F
    TOO_LARGE = 0x08,       // F4 90..BF, F5..FF 90..BF
    SURROGATE = 0x10,       // ED A0..BF
    OVERLONG_2 = 0x20,      // C0..C1 continuation
    TOO_LARGE_1000 = 0x40,  // F5..FF 80..8F (shares its bit with OVERLONG_4: both need b1 = F_ and b2 = 8_)
    OVERLONG_4 = 0x40,      // F0 80..8F
    TWO_CONTS = 0x80,       // continuation continuation
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS,  // classes that hold for any low nibble of b1
};

static const uint8_t by_b1_high_table[16] __attribute__((aligned(16))) = {
    TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,  // 0_ .. 7_
    TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS,                                      // 8_ .. B_
    TOO_SHORT | OVERLONG_2,                                                           // C_
    TOO_SHORT,                                                                        // D_
    TOO_SHORT | OVERLONG_3 | SURROGATE,                                               // E_
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,                              // F_
};
static const uint8_t by_b1_low_table[16] __attribute__((aligned(16))) = {
    CARRY | OVERLONG_2 | OVERLONG_3 | OVERLONG_4,  // _0
    CARRY | OVERLONG_2,                            // _1
    CARRY, CARRY,                                  // _2 _3
    CARRY | TOO_LARGE,                             // _4
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,     // _5 .. _C
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,                           // _D
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,     // _E _F
};
static const uint8_t by_b2_high_table[16] __attribute__((aligned(16))) = {
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,  // 0_ .. 7_
    TOO_LONG | TWO_CONTS | OVERLONG_2 | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,            // 8_
    TOO_LONG | TWO_CONTS | OVERLONG_2 | OVERLONG_3 | TOO_LARGE,                              // 9_
    TOO_LONG | TWO_CONTS | OVERLONG_2 | SURROGATE | TOO_LARGE,                               // A_
    TOO_LONG | TWO_CONTS | OVERLONG_2 | SURROGATE | TOO_LARGE,                               // B_
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,                                              // C_ .. F_
};

typedef struct {
    __m128i previous;  // the last block
    __m128i errors;    // nonzero bytes where an error was found
    __m128i all;       // OR of every byte, for the ASCII answer
} state;

static inline __attribute__((always_inline)) SSSE3_TARGET void step(state *s, __m128i input) {
    const __m128i low_nibble = _mm_set1_epi8(0x0f);
    const __m128i by_b1_high = _mm_load_si128((const __m128i *)by_b1_high_table);
    const __m128i by_b1_low = _mm_load_si128((const __m128i *)by_b1_low_table);
    const __m128i by_b2_high = _mm_load_si128((const __m128i *)by_b2_high_table);

    __m128i prev1 = _mm_alignr_epi8(input, s->previous, 15);  // each byte's predecessor
    __m128i b1_high = _mm_and_si128(_mm_srli_epi16(prev1, 4), low_nibble);
    __m128i b1_low = _mm_and_si128(prev1, low_nibble);
    __m128i b2_high = _mm_and_si128(_mm_srli_epi16(input, 4), low_nibble);
    __m128i special = _mm_and_si128(_mm_and_si128(_mm_shuffle_epi8(by_b1_high, b1_high),
                                                  _mm_shuffle_epi8(by_b1_low, b1_low)),
                                    _mm_shuffle_epi8(by_b2_high, b2_high));
    // A byte must continue a sequence as its 2nd or 3rd continuation when the byte two back is E0..FF or the byte
    // three back is F0..FF; saturating subtraction leaves the top bit set exactly then.
    __m128i prev2 = _mm_alignr_epi8(input, s->previous, 14);
    __m128i prev3 = _mm_alignr_epi8(input, s->previous, 13);
    __m128i third = _mm_subs_epu8(prev2, _mm_set1_epi8((char)(0xe0 - 0x80)));
    __m128i fourth = _mm_subs_epu8(prev3, _mm_set1_epi8((char)(0xf0 - 0x80)));
    __m128i must_continue = _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8((char)0x80));
    s->errors = _mm_or_si128(s->errors, _mm_xor_si128(special, must_continue));
    s->all = _mm_or_si128(s->all, input);
    s->previous = input;
}

static SSSE3_TARGET int validate(const uint8_t *bytes, size_t length) {
    state s = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
    size_t index = 0;
    for (; index + 16 <= length; index += 16) {
        step(&s, _mm_loadu_si128((const __m128i *)(bytes + index)));
    }
    if (index < length) {
        // The tail, zero-padded: a sequence cut short by the end meets a 00 byte and is TOO_SHORT.
        uint8_t tail[16] = {0};
        memcpy(tail, bytes + index, length - index);
        step(&s, _mm_loadu_si128((const __m128i *)tail));
    }
    // One block of zeros after the input: finds a sequence left open by a last block that was full.
    step(&s, _mm_setzero_si128());
    __m128i zero = _mm_setzero_si128();
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(s.errors, zero)) != 0xffff) return -1;
    return _mm_movemask_epi8(s.all) == 0 ? 1 : 0;
}

// The 32-byte step: PSHUFB and PALIGNR work within each 16-byte lane, so each byte's predecessors come from the
// input aligned against [the last block's upper lane, the input's lower lane].
typedef struct {
    __m256i previous;
    __m256i errors;
    __m256i all;
} state256;

static inline __attribute__((always_inline)) AVX2_TARGET void step256(state256 *s, __m256i input) {
    const __m256i low_nibble = _mm256_set1_epi8(0x0f);
    const __m256i by_b1_high = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)by_b1_high_table));
    const __m256i by_b1_low = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)by_b1_low_table));
    const __m256i by_b2_high = _mm256_broadcastsi128_si256(_mm_load_si128((const __m128i *)by_b2_high_table));

    __m256i before = _mm256_permute2x128_si256(s->previous, input, 0x21);
    __m256i prev1 = _mm256_alignr_epi8(input, before, 15);
    __m256i b1_high = _mm256_and_si256(_mm256_srli_epi16(prev1, 4), low_nibble);
    __m256i b1_low = _mm256_and_si256(prev1, low_nibble);
    __m256i b2_high = _mm256_and_si256(_mm256_srli_epi16(input, 4), low_nibble);
    __m256i special = _mm256_and_si256(_mm256_and_si256(_mm256_shuffle_epi8(by_b1_high, b1_high),
                                                        _mm256_shuffle_epi8(by_b1_low, b1_low)),
                                       _mm256_shuffle_epi8(by_b2_high, b2_high));
    __m256i prev2 = _mm256_alignr_epi8(input, before, 14);
    __m256i prev3 = _mm256_alignr_epi8(input, before, 13);
    __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xe0 - 0x80)));
    __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xf0 - 0x80)));
    __m256i must_continue = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8((char)0x80));
    s->errors = _mm256_or_si256(s->errors, _mm256_xor_si256(special, must_continue));
    s->all = _mm256_or_si256(s->all, input);
    s->previous = input;
}

static AVX2_TARGET int validate256(const uint8_t *bytes, size_t length) {
    state256 s = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    size_t index = 0;
    for (; index + 32 <= length; index += 32) {
        step256(&s, _mm256_loadu_si256((const __m256i *)(bytes + index)));
    }
    if (index < length) {
        uint8_t tail[32] = {0};  // zero-padded, as in `validate`
        memcpy(tail, bytes + index, length - index);
        step256(&s, _mm256_loadu_si256((const __m256i *)tail));
    }
    step256(&s, _mm256_setzero_si256());
    if (!_mm256_testz_si256(s.errors, s.errors)) return -1;
    return _mm256_movemask_epi8(s.all) == 0 ? 1 : 0;
}

int cutf8_validate_at(const uint8_t *bytes, size_t length, int level) {
    if (level < CUTF8_SSSE3 || level > cutf8_level()) return -2;
    if (length == 0) return 1;
    return level == CUTF8_AVX2 ? validate256(bytes, length) : validate(bytes, length);
}

int cutf8_validate(const uint8_t *bytes, size_t length) {
    return cutf8_validate_at(bytes, length, cutf8_level());
}

#else

int cutf8_level(void) { return CUTF8_NONE; }

int cutf8_available(void) { return 0; }

int cutf8_validate_at(const uint8_t *bytes, size_t length, int level) {
    (void)bytes;
    (void)length;
    (void)level;
    return -2;
}

int cutf8_validate(const uint8_t *bytes, size_t length) {
    (void)bytes;
    (void)length;
    return -2;
}

#endif
