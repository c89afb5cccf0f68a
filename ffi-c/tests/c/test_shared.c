/* Shared tables (sds_table_open_shared) with real processes: forked
 * children entering one table file, files that must be refused, and two
 * tables of one process on one file. Files live in a fresh directory under
 * /tmp, removed at the end. Every process stops itself with alarm() if it
 * runs too long. Usage: test_shared [iterations per child] (fewer under
 * valgrind). */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define PROCS 4
#define LIMIT 2 /* concurrentThreshold of point "limited" */
#define VISITS 50 /* visitThreshold of point "orders" */
#define NOW 1000
#define TIME_LIMIT_S 120 /* for any one process, valgrind included */
#define LAYOUT_RESULT SDS_RESULT_LAYOUT_MISMATCH

static char dir[] = "/tmp/sds-c-test-shared-XXXXXX";
static unsigned long iterations = 5000;

/* What the children write for the parent: a MAP_SHARED anonymous page,
 * changed with GCC's atomic builtins (C99 has no atomics). */
typedef struct {
    unsigned long in_flight;       /* admitted "limited" requests not exited yet */
    unsigned long over_limit;      /* times in_flight was seen above LIMIT */
    unsigned long limited_passed;  /* admitted "limited" requests */
    unsigned long orders_passed[PROCS];
} board;
static board *shared_board;

/* `name` inside this run's directory. */
static const char *in_dir(const char *name) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static sds_result open_shared(const char *path, size_t capacity, uint32_t flags, sds_table **out) {
    return sds_table_open_shared(path, strlen(path), capacity, flags, out);
}

/* The last error names the file and says what is wrong with it. */
static void check_message(const char *path, const char *what);

/* Opening `path` for `capacity` points is refused with `code`, nothing is
 * written, and the message names the file and `what` is wrong. */
static void check_refused(const char *path, size_t capacity, sds_result code, const char *what) {
    sds_table *t = NULL;
    CHECK_RESULT(open_shared(path, capacity, 0, &t), code);
    CHECK(t == NULL);
    check_message(path, what);
}

static void check_message(const char *path, const char *what) {
    const char *m = sds_check_last_error();
    CHECK(strstr(m, path) != NULL);
    CHECK(strstr(m, what) != NULL);
    if (strstr(m, path) == NULL || strstr(m, what) == NULL) {
        fprintf(stderr, "  message: \"%s\", wanted \"%s\"\n", m, what);
    }
}

/* Runs `body(index, table)` in `n` forked children and waits for them all;
 * each child frees its copy of `table` and exits with its checks' verdict. */
static void in_children(int n, sds_table *table, void (*body)(int, const sds_table *)) {
    pid_t pids[PROCS];
    int i;
    fflush(NULL); /* or the children flush the parent's buffers again */
    for (i = 0; i < n; i++) {
        pids[i] = fork();
        CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            alarm(TIME_LIMIT_S);
            body(i, table);
            sds_table_free(table);
            exit(sds_checks_failed == 0 ? 0 : 1);
        }
    }
    for (i = 0; i < n; i++) {
        int status = 0;
        CHECK(pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "  child %d: status %#x\n", i, (unsigned)status);
        }
    }
}

/* Holds an admitted request a little, so that processes overlap inside it. */
static void hold(void) {
    volatile int spin = 0;
    while (spin < 200) spin++;
}

static void count_and_limit(int index, const sds_table *t) {
    unsigned long i;
    (void)index;
    for (i = 0; i < iterations; i++) {
        sds_entry e;
        CHECK_OK(sds_enter(t, NAME("shared"), NOW, SDS_FLAG_NONE, &e));
        CHECK_OK(sds_exit(t, &e, NOW, SDS_OUTCOME_OK));
        CHECK_OK(sds_enter(t, NAME("limited"), NOW, SDS_FLAG_NONE, &e));
        if (!sds_entry_downgraded(&e)) {
            unsigned long now_in = __atomic_add_fetch(&shared_board->in_flight, 1, __ATOMIC_SEQ_CST);
            if (now_in > LIMIT) __atomic_add_fetch(&shared_board->over_limit, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&shared_board->limited_passed, 1, __ATOMIC_RELAXED);
            hold();
            __atomic_sub_fetch(&shared_board->in_flight, 1, __ATOMIC_SEQ_CST);
        } else {
            CHECK(sds_entry_reason(&e) == SDS_REASON_CONCURRENT);
        }
        CHECK_OK(sds_exit(t, &e, NOW, SDS_OUTCOME_OK));
    }
}

/* Children of one process enter one shared file: visits add up exactly,
 * every permit comes back, and the concurrency limit holds host-wide. */
static void test_processes_share_counts(void) {
    const char *path = in_dir("counts.sds");
    sds_table *t = NULL;
    sds_strategy s = sds_strategy_default();
    sds_stats st;
    uint32_t id;
    unsigned long total = PROCS * iterations;
    CHECK_OK(open_shared(path, 64, 0, &t));
    s.concurrent_threshold = LIMIT;
    CHECK_OK(sds_table_set_strategy(t, NAME("limited"), &s));
    CHECK_OK(sds_table_point(t, NAME("shared"), &id));
    in_children(PROCS, t, count_and_limit);
    CHECK_OK(sds_stats_get(t, NAME("shared"), NOW, &st));
    CHECK(st.visit == total);
    CHECK(st.concurrent == 0);
    CHECK_OK(sds_stats_get(t, NAME("limited"), NOW, &st));
    CHECK(st.visit == total);
    CHECK(st.concurrent == 0);
    CHECK(st.downgrade == total - shared_board->limited_passed);
    CHECK(shared_board->limited_passed >= LIMIT);
    CHECK(shared_board->over_limit == 0);
    CHECK(sds_table_len(t) == 2);
    sds_table_free(t);
    unlink(path);
}

static void try_orders(int index, const sds_table *t) {
    int i;
    for (i = 0; i < VISITS; i++) {
        sds_entry e;
        CHECK_OK(sds_enter(t, NAME("orders"), NOW, SDS_FLAG_NONE, &e));
        if (!sds_entry_downgraded(&e)) shared_board->orders_passed[index]++;
        CHECK_OK(sds_exit(t, &e, NOW, SDS_OUTCOME_OK));
    }
}

/* One visitThreshold for all the processes: together they are admitted
 * VISITS requests (a few more at most, one per racing process), not
 * VISITS each. */
static void test_visit_threshold_is_host_wide(void) {
    const char *path = in_dir("orders.sds");
    sds_table *t = NULL;
    sds_stats st;
    unsigned long passed = 0;
    int i;
    CHECK_OK(open_shared(path, 16, 0, &t));
    CHECK_OK(sds_table_set_strategy_json(t, NAME("orders"), NAME("{\"visitThreshold\": 50}")));
    in_children(PROCS, t, try_orders);
    for (i = 0; i < PROCS; i++) passed += shared_board->orders_passed[i];
    CHECK(passed >= VISITS && passed <= VISITS + PROCS);
    CHECK_OK(sds_stats_get(t, NAME("orders"), NOW, &st));
    CHECK(st.visit == (uint64_t)PROCS * VISITS);
    CHECK(st.downgrade == PROCS * VISITS - passed);
    sds_table_free(t);
    unlink(path);
}

/* Child `index` creates point "made-<index>", closed, and visits it once. */
static void make_point(int index, const sds_table *t) {
    char name[16];
    size_t len = (size_t)snprintf(name, sizeof name, "made-%d", index);
    sds_entry e;
    CHECK_OK(sds_table_set_strategy_json(t, name, len, NAME("{\"visitThreshold\": 0}")));
    CHECK_OK(sds_enter(t, name, len, NOW, SDS_FLAG_NONE, &e));
    CHECK(sds_entry_reason(&e) == SDS_REASON_VISIT);
    CHECK_OK(sds_exit(t, &e, NOW, SDS_OUTCOME_OK));
}

/* Points created by other processes: the parent sees their stats and the
 * table's length, and removes their strategies. */
static void test_points_of_other_processes(void) {
    const char *path = in_dir("made.sds");
    sds_table *t = NULL;
    sds_stats st;
    int i;
    CHECK_OK(open_shared(path, 64, 0, &t));
    in_children(PROCS, t, make_point);
    CHECK(sds_table_len(t) == PROCS);
    for (i = 0; i < PROCS; i++) {
        char name[16];
        size_t len = (size_t)snprintf(name, sizeof name, "made-%d", i);
        sds_entry e;
        CHECK_OK(sds_stats_get(t, name, len, NOW, &st));
        CHECK(st.visit == 1 && st.downgrade == 1 && st.concurrent == 0);
        CHECK_OK(sds_table_remove_strategy(t, name, len));
        CHECK_OK(sds_enter(t, name, len, NOW, SDS_FLAG_NONE, &e));
        CHECK(!sds_entry_downgraded(&e));
        CHECK_OK(sds_exit(t, &e, NOW, SDS_OUTCOME_OK));
    }
    CHECK(sds_table_len(t) == PROCS);
    sds_table_free(t);
    unlink(path);
}

/* Writes `len` bytes of a fixed pseudo-random sequence to a new 0600 file. */
static void write_random_file(const char *path, unsigned char *bytes, size_t len) {
    uint32_t x = 2463534242u;
    size_t i;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    for (i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes[i] = (unsigned char)x;
    }
    CHECK(fd >= 0 && write(fd, bytes, len) == (ssize_t)len);
    if (fd >= 0) close(fd);
}

static void test_random_bytes_are_refused_untouched(void) {
    static unsigned char bytes[16384], again[sizeof bytes];
    const char *path = in_dir("random.sds");
    int fd;
    write_random_file(path, bytes, sizeof bytes);
    check_refused(path, 16, SDS_RESULT_INVALID_ARGUMENT, "not an SDS table");
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0 && read(fd, again, sizeof again) == (ssize_t)sizeof again);
    CHECK(memcmp(bytes, again, sizeof bytes) == 0);
    if (fd >= 0) close(fd);
    unlink(path);
}

/* Makes a table file of `capacity` points and detaches from it. */
static void make_table_file(const char *path, size_t capacity) {
    sds_table *t = NULL;
    CHECK_OK(open_shared(path, capacity, 0, &t));
    CHECK_OK(sds_table_set_strategy_json(t, NAME("a"), NAME("{\"visitThreshold\": 3}")));
    sds_table_free(t);
}

static void test_truncated_file(void) {
    const char *path = in_dir("truncated.sds");
    struct stat sb;
    make_table_file(path, 16);
    CHECK(stat(path, &sb) == 0);
    CHECK(truncate(path, sb.st_size / 2) == 0);
    check_refused(path, 16, SDS_RESULT_INVALID_ARGUMENT, "truncated");
    unlink(path);
}

static void test_symlink_is_refused(void) {
    char target[256];
    const char *link;
    snprintf(target, sizeof target, "%s", in_dir("target.sds"));
    make_table_file(target, 16);
    link = in_dir("link.sds");
    CHECK(symlink(target, link) == 0);
    check_refused(link, 16, SDS_RESULT_INVALID_ARGUMENT, "symbolic link");
    unlink(link);
    unlink(target);
}

static void test_other_capacity(void) {
    const char *path = in_dir("capacity.sds");
    sds_table *attached = NULL;
    make_table_file(path, 16);
    /* Read from the file's layout header. */
    check_refused(path, 32, LAYOUT_RESULT, "capacity: the file has 16, this process needs 32");
    /* Against this process's own attachment of the file. */
    CHECK_OK(open_shared(path, 16, 0, &attached));
    check_refused(path, 32, LAYOUT_RESULT, "capacity: the file has 16, this process needs 32");
    sds_table_free(attached);
    unlink(path);
}

/* 0600 unless SDS_SHARED_GROUP; a group-readable file needs the flag. */
static void test_modes(void) {
    const char *path = in_dir("group.sds");
    sds_table *t = NULL;
    struct stat sb;
    mode_t mask = umask(0);
    umask(mask);
    CHECK_OK(open_shared(path, 16, SDS_SHARED_GROUP, &t));
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == (0660 & ~mask));
    sds_table_free(t);
    CHECK(chmod(path, 0640) == 0);
    t = NULL;
    check_refused(path, 16, SDS_RESULT_INVALID_ARGUMENT, "mode 0640 grants more than the 0600 asked for");
    unlink(path);

    path = in_dir("private.sds");
    CHECK_OK(open_shared(path, 16, 0, &t));
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == (0600 & ~mask));
    sds_table_free(t);
    unlink(path);
}

static void test_not_a_file(void) {
    const char *path = in_dir("subdir");
    sds_table *t = NULL;
    CHECK(mkdir(path, 0700) == 0);
    check_refused(path, 16, SDS_RESULT_INVALID_ARGUMENT, "directory");
    rmdir(path);
    path = in_dir("no/such/dir.sds");
    CHECK_RESULT(open_shared(path, 16, 0, &t), SDS_RESULT_INVALID_ARGUMENT);
    check_message(path, "No such file or directory");
}

static void test_arguments(void) {
    const char *path = in_dir("arguments.sds");
    static const char with_nul[] = "/tmp/a\0b";
    sds_table *t = NULL;
    CHECK_RESULT(open_shared(path, 16, 2, &t), SDS_RESULT_INVALID_ARGUMENT);
    CHECK(strstr(sds_check_last_error(), "unknown flag bits 0x2") != NULL);
    CHECK_RESULT(sds_table_open_shared(with_nul, sizeof with_nul - 1, 16, 0, &t),
                 SDS_RESULT_INVALID_ARGUMENT);
    CHECK(strstr(sds_check_last_error(), "NUL") != NULL);
    CHECK_RESULT(sds_table_open_shared(path, 0, 16, 0, &t), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_table_open_shared(NULL, 4, 16, 0, &t), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(open_shared(path, 16, 0, NULL), SDS_RESULT_NULL_ARGUMENT);
    /* A bad capacity is the core's verdict and message, as for sds_table_new. */
    const size_t bad_capacities[] = {0, (size_t)-1, (size_t)SDS_MAX_CAPACITY + 1};
    for (size_t i = 0; i < sizeof bad_capacities / sizeof bad_capacities[0]; i++) {
        CHECK_RESULT(open_shared(path, bad_capacities[i], 0, &t), SDS_RESULT_INVALID_CAPACITY);
        CHECK(strcmp(sds_check_last_error(),
                     "SDS_INVALID_CAPACITY: table capacity must be within 1..=1048576") == 0);
    }
    CHECK(t == NULL);
    CHECK(access(path, F_OK) != 0); /* nothing was created */
}

/* One visit to "x"; its reason (SDS_REASON_NONE when admitted). */
static sds_reason visit(const sds_table *t) {
    sds_entry e;
    CHECK_OK(sds_enter(t, NAME("x"), NOW, SDS_FLAG_NONE, &e));
    CHECK_OK(sds_exit(t, &e, NOW, SDS_OUTCOME_OK));
    return sds_entry_reason(&e);
}

static void visit_again(int index, const sds_table *inherited) {
    sds_table *again = NULL;
    (void)index;
    /* The child opens the file again (it shares the attachment it
     * inherited) and is refused like the parent. */
    CHECK_OK(open_shared(in_dir("two.sds"), 16, 0, &again));
    CHECK(visit(again) == SDS_REASON_VISIT);
    CHECK(visit(inherited) == SDS_REASON_VISIT);
    sds_table_free(again);
}

/* Two tables of one process on one file share one attachment: freeing one
 * leaves the other working on the same points; the file outlives both.
 * The points' state is checked through decisions ("x" admits 3 visits),
 * which every table of the file sees. */
static void test_two_tables_one_file(void) {
    const char *path = in_dir("two.sds");
    sds_table *a = NULL, *b = NULL;
    sds_stats st;
    CHECK_OK(open_shared(path, 16, 0, &a));
    CHECK_OK(open_shared(path, 16, 0, &b));
    CHECK_OK(sds_table_set_strategy_json(a, NAME("x"), NAME("{\"visitThreshold\": 3}")));
    CHECK(visit(a) == SDS_REASON_NONE);
    CHECK(visit(b) == SDS_REASON_NONE);
    sds_table_free(b);
    CHECK(visit(a) == SDS_REASON_NONE);
    CHECK_OK(sds_stats_get(a, NAME("x"), NOW, &st));
    CHECK(st.visit == 3 && st.concurrent == 0);
    sds_table_free(a);

    CHECK_OK(open_shared(path, 16, 0, &a));
    CHECK_OK(open_shared(path, 16, 0, &b));
    sds_table_free(a);
    CHECK(visit(b) == SDS_REASON_VISIT);
    in_children(1, b, visit_again);
    sds_table_free(b);
    /* Every table of the file freed: it is still there to attach again. */
    CHECK_OK(open_shared(path, 16, 0, &a));
    CHECK(visit(a) == SDS_REASON_VISIT);
    sds_table_free(a);
    unlink(path);
}

/* Forks a child that takes `n` permits of "held" and keeps them until it is
 * killed; returns its pid once it holds them. */
static pid_t fork_holder(const sds_table *t, int n) {
    int fds[2];
    char said = 0;
    pid_t pid;
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int i, admitted = 0;
        alarm(TIME_LIMIT_S);
        close(fds[0]);
        for (i = 0; i < n; i++) {
            sds_entry e;
            if (sds_enter(t, NAME("held"), NOW, SDS_FLAG_NONE, &e) == SDS_RESULT_OK &&
                !sds_entry_downgraded(&e)) {
                admitted++;
            }
        }
        said = admitted == n ? 'k' : 'x';
        if (write(fds[1], &said, 1) != 1) _exit(1);
        for (;;) pause();
    }
    close(fds[1]);
    CHECK(read(fds[0], &said, 1) == 1 && said == 'k');
    close(fds[0]);
    return pid;
}

static void kill_and_reap(pid_t pid) {
    int status = 0;
    CHECK(kill(pid, SIGKILL) == 0);
    CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
}

/* A request to "held" at `now`, exited at once: its reason. */
static sds_reason try_held(const sds_table *t, uint64_t now) {
    sds_entry e;
    CHECK_OK(sds_enter(t, NAME("held"), now, SDS_FLAG_NONE, &e));
    CHECK_OK(sds_exit(t, &e, now, SDS_OUTCOME_OK));
    return sds_entry_reason(&e);
}

static uint64_t held_now(const sds_table *t) {
    sds_stats st;
    CHECK_OK(sds_stats_get(t, NAME("held"), NOW, &st));
    return st.concurrent;
}

/* A child that attaches (registering on its first call) finds the parent's
 * one permit only: the dead holder's came back as it attached. */
static void sees_one_permit(int index, const sds_table *t) {
    (void)index;
    CHECK(held_now(t) == 1);
    CHECK(try_held(t, NOW) == SDS_REASON_NONE);
}

/* A process killed (kill -9) while it holds 2 of 3 permits: the others are
 * refused for CONCURRENT until a refused request scans for dead holders (at
 * most once a second, by the requests' now_ms); then its 2 permits come
 * back, once, and requests pass. A second one killed the same way: a
 * process that attaches gives them back at once. */
static void test_dead_holder_permits_come_back(void) {
    const char *path = in_dir("dead.sds");
    sds_table *t = NULL;
    sds_entry mine;
    pid_t holder;
    CHECK_OK(open_shared(path, 16, 0, &t));
    CHECK_OK(sds_table_set_strategy_json(t, NAME("held"), NAME("{\"concurrentThreshold\": 3}")));
    CHECK_OK(sds_enter(t, NAME("held"), NOW, SDS_FLAG_NONE, &mine));
    CHECK(!sds_entry_downgraded(&mine));
    holder = fork_holder(t, 2);
    CHECK(held_now(t) == 3);
    /* Refused while the holder lives: the scan it starts finds no one dead. */
    CHECK(try_held(t, NOW) == SDS_REASON_CONCURRENT);
    kill_and_reap(holder);
    CHECK(try_held(t, NOW + 999) == SDS_REASON_CONCURRENT); /* no scan due */
    CHECK(held_now(t) == 3);
    /* A second after the last scan: this refused request scans. */
    CHECK(try_held(t, NOW + 1000) == SDS_REASON_CONCURRENT);
    CHECK(held_now(t) == 1);
    CHECK(try_held(t, NOW + 1000) == SDS_REASON_NONE);
    CHECK(try_held(t, NOW + 2000) == SDS_REASON_NONE);
    CHECK(held_now(t) == 1);

    holder = fork_holder(t, 2);
    kill_and_reap(holder);
    CHECK(held_now(t) == 3);
    in_children(1, t, sees_one_permit);
    CHECK(held_now(t) == 1);
    CHECK_OK(sds_exit(t, &mine, NOW, SDS_OUTCOME_OK));
    CHECK(held_now(t) == 0);
    sds_table_free(t);
    unlink(path);
}

int main(int argc, char **argv) {
    if (argc > 1) iterations = strtoul(argv[1], NULL, 10);
    alarm(TIME_LIMIT_S);
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    shared_board = mmap(NULL, sizeof *shared_board, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared_board == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    test_processes_share_counts();
    test_visit_threshold_is_host_wide();
    test_points_of_other_processes();
    test_random_bytes_are_refused_untouched();
    test_truncated_file();
    test_symlink_is_refused();
    test_other_capacity();
    test_modes();
    test_not_a_file();
    test_arguments();
    test_two_tables_one_file();
    test_dead_holder_permits_come_back();
    munmap(shared_board, sizeof *shared_board);
    if (rmdir(dir) != 0) {
        fprintf(stderr, "%s: %s (a test left a file behind)\n", dir, strerror(errno));
        sds_checks_failed++;
    }
    return sds_check_summary("test_shared");
}
