/* A minimal test harness for the C tests of libsds: each CHECK counts one
 * assertion; sds_check_summary prints "N passed, N failed" and gives the
 * process exit status. */
#ifndef SDS_CHECK_H
#define SDS_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sds.h"

static unsigned long sds_checks_passed;
static unsigned long sds_checks_failed;

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (cond) {                                                           \
            sds_checks_passed++;                                              \
        } else {                                                              \
            sds_checks_failed++;                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                   \
        }                                                                     \
    } while (0)

/* A call must return exactly this sds_result. */
#define CHECK_RESULT(call, expected)                                          \
    do {                                                                      \
        sds_result check_got_ = (call);                                       \
        if (check_got_ == (sds_result)(expected)) {                           \
            sds_checks_passed++;                                              \
        } else {                                                              \
            sds_checks_failed++;                                              \
            fprintf(stderr, "%s:%d: %s returned %u, expected %s (%u)\n",      \
                    __FILE__, __LINE__, #call, (unsigned)check_got_,          \
                    #expected, (unsigned)(expected));                         \
        }                                                                     \
    } while (0)

#define CHECK_OK(call) CHECK_RESULT(call, SDS_RESULT_OK)

/* Point names are (pointer, length): a string literal and its length. */
#define NAME(lit) lit, (sizeof(lit) - 1)

static inline int sds_check_summary(const char *suite) {
    printf("%s: %lu passed, %lu failed\n", suite, sds_checks_passed,
           sds_checks_failed);
    return sds_checks_failed == 0 ? 0 : 1;
}

/* This thread's last error message (for checks that it names something). */
static inline const char *sds_check_last_error(void) {
    static char buf[SDS_MESSAGE_MAX + 1];
    size_t len = 0;
    if (sds_last_error_message(buf, sizeof buf, &len) != SDS_RESULT_OK) {
        return "";
    }
    return buf;
}

/* sds_metrics_text's text, in a buffer grown as `*needed` asks (free it);
 * NULL if a call failed. */
static inline char *sds_check_metrics(const sds_table *t, const sds_agent *agent,
                                      const sds_cluster *cluster, uint32_t format,
                                      uint64_t now_ms) {
    size_t cap = 64, needed = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (sds_metrics_text(t, agent, cluster, format, now_ms, buf, cap, &needed) !=
            SDS_RESULT_OK) {
            break;
        }
        if (needed < cap) {
            return buf;
        }
        free(buf);
        cap = needed + 1;
        buf = malloc(cap);
    }
    free(buf);
    return NULL;
}

/* `text` holds `line` (a whole line, its newline included). */
#define CHECK_LINE(text, line) CHECK((text) != NULL && strstr((text), line "\n") != NULL)

#endif
