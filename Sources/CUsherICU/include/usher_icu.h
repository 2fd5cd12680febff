#ifndef USHER_ICU_H
#define USHER_ICU_H
/*
 * Usher's window onto ICU. Foundation brings its own ICU module, and a second module over the
 * system's ICU headers clashes with it, so this header exposes plain C types only and the ICU
 * headers stay inside usher_icu.c.
 */
#include <stdint.h>

/* Bits returned by usher_scalar_class. */
enum {
    /* A letter, number, mark or connector punctuation (the underscore): part of a word. */
    USHER_SCALAR_WORD = 1,
    /* Written without spaces between words: Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar. */
    USHER_SCALAR_UNSPACED = 2,
};

/* Classifies one Unicode scalar for keyword boundary checks (USHER_SCALAR_* bits). */
int32_t usher_scalar_class(int32_t scalar);

/*
 * Normalises UTF-8 text for keyword matching.
 *
 * `exact` receives NFKC_Casefold(in) with default-ignorable and control characters removed,
 * runs of white space collapsed to one U+0020 and the ends trimmed. `folded` receives the same
 * with accents folded (combining diacritics of the canonical decomposition dropped, a few
 * stroked letters mapped to their base). Invalid UTF-8 becomes U+FFFD.
 *
 * Returns 0 on success, 1 if a buffer was too small (call again with buffers of at least
 * *exactLen and *foldedLen bytes), or a negative ICU error code. On 0 and 1 the lengths are set;
 * *foldedLen is -1 when the folded form equals the exact form (nothing was written to folded).
 */
int32_t usher_normalize_utf8(const uint8_t *in, int32_t inLen,
                             uint8_t *exact, int32_t exactCap, int32_t *exactLen,
                             uint8_t *folded, int32_t foldedCap, int32_t *foldedLen);

#endif
