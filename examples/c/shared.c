/* libsds: one visit threshold for several worker processes (a prefork
 * server's workers), through a table file they all open.
 *
 *   cc shared.c $(pkg-config --cflags --libs sds) -o shared
 *   ./shared [table file]   (default: /dev/shm/sds-demo-<pid>.sds, removed at the end)
 *
 * The parent opens the table and sets the strategy, then forks the
 * workers; each makes a few requests and reports what it was admitted.
 * Together they are admitted the threshold, not the threshold each. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sds.h>

#define WORKERS 4
#define REQUESTS 5 /* per worker */

static const char point[] = "orders.create";

static int fail(const char *what) {
    char detail[SDS_MESSAGE_MAX + 1];
    size_t len;
    if (sds_last_error_message(detail, sizeof detail, &len) != SDS_RESULT_OK) detail[0] = 0;
    fprintf(stderr, "%s: %s\n", what, detail);
    return 1;
}

/* One worker process: its requests, on the table it inherited (a worker
 * could as well open the same file itself). Returns how many passed. */
static int work(int worker, const sds_table *table) {
    int i, passed = 0;
    for (i = 0; i < REQUESTS; i++) {
        sds_entry entry;
        uint64_t now = sds_now_ms();
        if (sds_enter(table, point, strlen(point), now, SDS_FLAG_NONE, &entry) != SDS_RESULT_OK) {
            fail("sds_enter");
            return -1;
        }
        if (!sds_entry_downgraded(&entry)) passed++; /* ... the real work ... */
        if (sds_exit(table, &entry, sds_now_ms(), SDS_OUTCOME_OK) != SDS_RESULT_OK) {
            fail("sds_exit");
            return -1;
        }
    }
    printf("worker %d (pid %ld): admitted %d of %d, downgraded %d\n", worker, (long)getpid(),
           passed, REQUESTS, REQUESTS - passed);
    return passed;
}

int main(int argc, char **argv) {
    static const char strategy[] = "{\"visitThreshold\": 10}"; /* 10 per 10 s, host-wide */
    char path[256];
    sds_table *table = NULL;
    sds_stats stats;
    pid_t pids[WORKERS];
    int i, admitted = 0, failed = 0;

    if (argc > 1) {
        snprintf(path, sizeof path, "%s", argv[1]);
    } else {
        snprintf(path, sizeof path, "/dev/shm/sds-demo-%ld.sds", (long)getpid());
    }
    if (sds_table_open_shared(path, strlen(path), 64, 0, &table) != SDS_RESULT_OK) {
        return fail("sds_table_open_shared");
    }
    if (sds_table_set_strategy_json(table, point, strlen(point), strategy, strlen(strategy)) !=
        SDS_RESULT_OK) {
        sds_table_free(table);
        return fail("sds_table_set_strategy_json");
    }
    printf("%s: %s on %s, %d workers x %d requests\n", path, strategy, point, WORKERS, REQUESTS);

    fflush(stdout); /* or each worker prints the parent's buffer again */
    for (i = 0; i < WORKERS; i++) {
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("fork");
            failed = 1;
        } else if (pids[i] == 0) {
            int passed = work(i + 1, table);
            sds_table_free(table); /* detaches this process */
            exit(passed < 0 ? 255 : passed);
        }
    }
    for (i = 0; i < WORKERS; i++) {
        int status = 0;
        if (pids[i] <= 0) continue;
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) > REQUESTS) {
            failed = 1;
            continue;
        }
        admitted += WEXITSTATUS(status);
    }

    if (sds_stats_get(table, point, strlen(point), sds_now_ms(), &stats) != SDS_RESULT_OK) {
        failed = fail("sds_stats_get");
    } else {
        printf("host total: admitted %d of %llu requests, %llu downgraded (the threshold is "
               "for all workers together)\n",
               admitted, (unsigned long long)stats.visit, (unsigned long long)stats.downgrade);
    }
    sds_table_free(table);
    if (argc <= 1) unlink(path);
    return failed;
}
