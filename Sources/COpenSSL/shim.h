#ifndef USHER_COPENSSL_SHIM_H
#define USHER_COPENSSL_SHIM_H
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

/* BIO_get_mem_data is a macro over BIO_ctrl: the bytes a memory BIO holds, and their count. */
static inline long usher_bio_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

/* Key type identifiers are macros of macros (EVP_PKEY_RSA is NID_rsaEncryption). */
static inline int usher_evp_pkey_rsa(void) { return EVP_PKEY_RSA; }
static inline int usher_evp_pkey_ed25519(void) { return EVP_PKEY_ED25519; }
#endif
