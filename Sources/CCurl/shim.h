#ifndef USHER_CCURL_SHIM_H
#define USHER_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot
   call: one typed wrapper per kind of argument. */
static inline CURLcode usher_curl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode usher_curl_setopt_off(CURL *curl, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(curl, option, value);
}
/* Strings (copied by libcurl, except CURLOPT_POSTFIELDS), data pointers and lists. */
static inline CURLcode usher_curl_setopt_pointer(CURL *curl, CURLoption option, const void *value) {
    return curl_easy_setopt(curl, option, value);
}
/* CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION share this signature. */
static inline CURLcode usher_curl_setopt_write(CURL *curl, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode usher_curl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}
static inline CURLcode usher_curl_getinfo_pointer(CURL *curl, CURLINFO info, void **value) {
    return curl_easy_getinfo(curl, info, value);
}
static inline CURLMcode usher_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/* CURL_GLOBAL_ALL is a macro of macros. */
static inline CURLcode usher_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }
#endif
