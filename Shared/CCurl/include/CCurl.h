#ifndef CCURL_H
#define CCURL_H

/*
 * Typed, non-variadic wrappers over libcurl's variadic option and info calls.
 *
 * Swift cannot call C variadic functions, and passing the wrong type through
 * `...` is undefined behaviour that no compiler catches. Each wrapper fixes
 * the argument type, so a call site states which kind of value an option
 * takes. Only the kinds the CurlHTTP client uses are here.
 */

#include <curl/curl.h>

#ifdef __linux__
/* The curl loop waits in epoll(7) and is woken through an eventfd(2); Swift's
 * Glibc module exports neither header. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

/* curl_easy_setopt for CURLOPTTYPE_LONG options (flags, time-outs in ms). */
CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value);

/* curl_easy_setopt for CURLOPTTYPE_OFF_T options (the *_LARGE sizes). */
CURLcode ccurl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value);

/* curl_easy_setopt for CURLOPTTYPE_STRINGPOINT options, which curl copies
 * (CURLOPT_URL, CURLOPT_USERAGENT, CURLOPT_PROTOCOLS_STR). */
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value);

/* curl_easy_setopt for CURLOPTTYPE_OBJECTPOINT / CBPOINT / SLISTPOINT options
 * (CURLOPT_PRIVATE, CURLOPT_WRITEDATA, CURLOPT_HEADERDATA, CURLOPT_HTTPHEADER,
 * and CURLOPT_COPYPOSTFIELDS, which copies CURLOPT_POSTFIELDSIZE_LARGE bytes). */
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value);

/* curl_easy_setopt for CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION, which
 * share one signature. */
CURLcode ccurl_easy_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback callback);

/* curl_easy_getinfo for CURLINFO_LONG items (CURLINFO_RESPONSE_CODE, CURLINFO_NUM_CONNECTS). */
CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);

/* curl_easy_getinfo for CURLINFO_OFF_T items (CURLINFO_TOTAL_TIME_T). */
CURLcode ccurl_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);

/* curl_easy_getinfo for CURLINFO_PTR items (CURLINFO_PRIVATE). */
CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value);

/* curl_multi_setopt for long options (CURLMOPT_MAX_HOST_CONNECTIONS, CURLMOPT_MAXCONNECTS). */
CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value);

/* curl_multi_setopt for pointer options (CURLMOPT_SOCKETDATA, CURLMOPT_TIMERDATA). */
CURLMcode ccurl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value);

/* curl_multi_setopt for CURLMOPT_SOCKETFUNCTION. */
CURLMcode ccurl_multi_setopt_socket_function(CURLM *handle, curl_socket_callback callback);

/* curl_multi_setopt for CURLMOPT_TIMERFUNCTION. */
CURLMcode ccurl_multi_setopt_timer_function(CURLM *handle, curl_multi_timer_callback callback);

#endif /* CCURL_H */
