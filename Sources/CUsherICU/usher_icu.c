#include "usher_icu.h"

#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>

int32_t usher_scalar_class(int32_t scalar) {
    int32_t result = 0;
    if ((U_MASK(u_charType(scalar)) & (U_GC_L_MASK | U_GC_N_MASK | U_GC_M_MASK | U_GC_PC_MASK)) != 0) {
        result |= USHER_SCALAR_WORD;
    }
    if (uscript_hasScript(scalar, USCRIPT_HAN) || uscript_hasScript(scalar, USCRIPT_HIRAGANA) ||
        uscript_hasScript(scalar, USCRIPT_KATAKANA) || uscript_hasScript(scalar, USCRIPT_THAI) ||
        uscript_hasScript(scalar, USCRIPT_LAO) || uscript_hasScript(scalar, USCRIPT_KHMER) ||
        uscript_hasScript(scalar, USCRIPT_MYANMAR)) {
        result |= USHER_SCALAR_UNSPACED;
    }
    return result;
}

/* A UTF-16 buffer on the stack for ordinary messages, on the heap for long ones. */
enum { STACK_UNITS = 1024 };
typedef struct {
    UChar *units;
    int32_t length;
    int32_t capacity;
    UChar stack[STACK_UNITS];
} Buffer16;

static void buffer_init(Buffer16 *b) {
    b->units = b->stack;
    b->length = 0;
    b->capacity = STACK_UNITS;
}

static int buffer_reserve(Buffer16 *b, int32_t capacity) {
    if (capacity <= b->capacity) return 1;
    UChar *units = malloc((size_t)capacity * sizeof(UChar));
    if (units == NULL) return 0;
    memcpy(units, b->units, (size_t)b->length * sizeof(UChar));
    if (b->units != b->stack) free(b->units);
    b->units = units;
    b->capacity = capacity;
    return 1;
}

static void buffer_free(Buffer16 *b) {
    if (b->units != b->stack) free(b->units);
}

/* Unicode's White_Space property: a fixed list since Unicode 6.3. */
static int is_white_space(UChar32 c) {
    if (c < 0x80) return c == 0x20 || (c >= 0x09 && c <= 0x0D);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* General category Cc: C0 and C1 controls. */
static int is_control(UChar32 c) {
    return c < 0x20 || (c >= 0x7F && c <= 0x9F);
}

/*
 * Drops control characters that are not white space, collapses white space runs to one U+0020
 * and trims both ends, in place. NFKC_Casefold has already removed the default-ignorable
 * characters (zero-width space and joiners, soft hyphen, bidi controls, BOM, variation selectors).
 */
static void clean_spaces(Buffer16 *b) {
    int32_t read = 0, write = 0;
    int pendingSpace = 0;
    while (read < b->length) {
        UChar32 c;
        U16_NEXT(b->units, read, b->length, c);
        if (is_white_space(c)) {
            pendingSpace = write > 0;
            continue;
        }
        if (is_control(c)) continue;
        if (pendingSpace) {
            b->units[write++] = 0x20;
            pendingSpace = 0;
        }
        U16_APPEND_UNSAFE(b->units, write, c);
    }
    b->length = write;
}

/* Combining marks treated as accents: the combining diacritical blocks, Hebrew points, Arabic harakat. */
static int is_accent(UChar32 c) {
    int inBlock = (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) ||
                  (c >= 0x1DC0 && c <= 0x1DFF) || (c >= 0x20D0 && c <= 0x20FF) ||
                  (c >= 0xFE20 && c <= 0xFE2F) || (c >= 0x0591 && c <= 0x05C7) ||
                  (c >= 0x0610 && c <= 0x061A) || (c >= 0x064B && c <= 0x065F) || c == 0x0670;
    return inBlock && u_charType(c) == U_NON_SPACING_MARK;
}

/* Letters with a stroke or without a dot have no decomposition; fold them to their base letter. */
static UChar32 stroke_base(UChar32 c) {
    switch (c) {
    case 0x0142: return 'l';  /* ł */
    case 0x00F8: return 'o';  /* ø */
    case 0x0111: return 'd';  /* đ */
    case 0x0127: return 'h';  /* ħ */
    case 0x0167: return 't';  /* ŧ */
    case 0x0131: return 'i';  /* ı */
    default: return c;
    }
}

/*
 * Writes the accent-folded form of `in` into `out`: each character's canonical decomposition
 * without its accents, recomposed. Returns 0 on success or an ICU error code.
 */
static UErrorCode fold_accents(const Buffer16 *in, Buffer16 *out, const UNormalizer2 *nfd,
                               const UNormalizer2 *nfc) {
    out->length = 0;
    if (!buffer_reserve(out, in->length + 64)) return U_MEMORY_ALLOCATION_ERROR;
    int32_t read = 0;
    while (read < in->length) {
        /* One character adds at most 32 units (its decomposition buffer). */
        if (out->capacity - out->length < 32 && !buffer_reserve(out, out->capacity * 2)) {
            return U_MEMORY_ALLOCATION_ERROR;
        }
        UChar32 c;
        U16_NEXT(in->units, read, in->length, c);
        /* Below U+00C0 and in the CJK, Yi and Hangul blocks nothing carries an accent. */
        if (c < 0xC0 || (c >= 0x2E80 && c < 0xD800)) {
            out->units[out->length++] = (UChar)c;
            continue;
        }
        if (is_accent(c)) continue;
        UChar32 base = stroke_base(c);
        if (base != c) {
            out->units[out->length++] = (UChar)base;
            continue;
        }
        UChar decomposition[32];
        UErrorCode err = U_ZERO_ERROR;
        int32_t length = c == 0x0439 /* й is a letter of its own, not an accented и */
            ? -1 : unorm2_getDecomposition(nfd, c, decomposition, 32, &err);
        /* Only letters lose their accents: ≠ (= with a combining overlay) stays ≠. */
        int hasAccent = 0;
        for (int32_t i = 0; i < length && U_SUCCESS(err);) {
            UChar32 d;
            U16_NEXT(decomposition, i, length, d);
            if (i == U16_LENGTH(d) && !u_isalpha(d)) break;
            if (is_accent(d)) hasAccent = 1;
        }
        if (length <= 0 || U_FAILURE(err) || !hasAccent) {
            U16_APPEND_UNSAFE(out->units, out->length, c);
            continue;
        }
        UChar kept[32];
        int32_t keptLength = 0;
        for (int32_t i = 0; i < length;) {
            UChar32 d;
            U16_NEXT(decomposition, i, length, d);
            if (!is_accent(d)) U16_APPEND_UNSAFE(kept, keptLength, d);
        }
        if (keptLength > 1) {
            UChar composed[32];
            keptLength = unorm2_normalize(nfc, kept, keptLength, composed, 32, &err);
            if (U_FAILURE(err)) return err;
            memcpy(kept, composed, (size_t)keptLength * sizeof(UChar));
        }
        memcpy(out->units + out->length, kept, (size_t)keptLength * sizeof(UChar));
        out->length += keptLength;
    }
    return U_ZERO_ERROR;
}

static int32_t fail(UErrorCode err) {
    return err > 0 ? -(int32_t)err : -1;
}

int32_t usher_normalize_utf8(const uint8_t *in, int32_t inLen,
                             uint8_t *exact, int32_t exactCap, int32_t *exactLen,
                             uint8_t *folded, int32_t foldedCap, int32_t *foldedLen) {
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2 *casefold = unorm2_getNFKCCasefoldInstance(&err);
    const UNormalizer2 *nfd = unorm2_getNFDInstance(&err);
    const UNormalizer2 *nfc = unorm2_getNFCInstance(&err);
    if (U_FAILURE(err)) return fail(err);

    Buffer16 source, normal, fold;
    buffer_init(&source);
    buffer_init(&normal);
    buffer_init(&fold);
    int32_t result = 0;

    /* UTF-8 never needs more UTF-16 units than it has bytes. */
    if (!buffer_reserve(&source, inLen + 1)) { err = U_MEMORY_ALLOCATION_ERROR; goto done; }
    u_strFromUTF8WithSub(source.units, source.capacity, &source.length, (const char *)in, inLen,
                         0xFFFD, NULL, &err);
    if (U_FAILURE(err)) goto done;

    if (!buffer_reserve(&normal, source.length * 2 + 16)) { err = U_MEMORY_ALLOCATION_ERROR; goto done; }
    normal.length = unorm2_normalize(casefold, source.units, source.length, normal.units,
                                     normal.capacity, &err);
    if (err == U_BUFFER_OVERFLOW_ERROR) {
        int32_t needed = normal.length;
        err = U_ZERO_ERROR;
        normal.length = 0;
        if (!buffer_reserve(&normal, needed + 1)) { err = U_MEMORY_ALLOCATION_ERROR; goto done; }
        normal.length = unorm2_normalize(casefold, source.units, source.length, normal.units,
                                         normal.capacity, &err);
    }
    if (U_FAILURE(err)) goto done;
    clean_spaces(&normal);

    err = fold_accents(&normal, &fold, nfd, nfc);
    if (U_FAILURE(err)) goto done;
    clean_spaces(&fold);
    int same = fold.length == normal.length &&
               memcmp(fold.units, normal.units, (size_t)normal.length * sizeof(UChar)) == 0;

    u_strToUTF8((char *)exact, exactCap, exactLen, normal.units, normal.length, &err);
    if (err == U_BUFFER_OVERFLOW_ERROR || err == U_STRING_NOT_TERMINATED_WARNING) {
        if (err == U_BUFFER_OVERFLOW_ERROR) result = 1;
        err = U_ZERO_ERROR;
    }
    if (U_FAILURE(err)) goto done;
    if (same) {
        *foldedLen = -1;
    } else {
        u_strToUTF8((char *)folded, foldedCap, foldedLen, fold.units, fold.length, &err);
        if (err == U_BUFFER_OVERFLOW_ERROR || err == U_STRING_NOT_TERMINATED_WARNING) {
            if (err == U_BUFFER_OVERFLOW_ERROR) result = 1;
            err = U_ZERO_ERROR;
        }
    }

done:
    buffer_free(&source);
    buffer_free(&normal);
    buffer_free(&fold);
    return U_FAILURE(err) ? fail(err) : result;
}
