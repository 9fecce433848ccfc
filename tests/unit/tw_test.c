#include "tw_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char paths[8][512];

static const char *tmpdir(void)
{
    const char *d = getenv("TW_TMPDIR");
    return d && *d ? d : "/tmp";
}

const char *tw_test_path(int slot, const char *name)
{
    snprintf(paths[slot & 7], sizeof paths[0], "%s/tw-%d-%d-%s", tmpdir(), (int)getpid(), slot, name);
    return paths[slot & 7];
}

const char *tw_test_file(int slot, const char *text)
{
    const char *p = tw_test_path(slot, "input.csv");
    FILE *f = fopen(p, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return p;
}

char *tw_test_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

int tw_test_run(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    buf[len] = '\0';
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int missing_data;

void tw_test_need_data(const char *path)
{
    if (access(path, R_OK) == 0) return;
    missing_data++;
    fprintf(stderr, "SKIP: this test needs %s, which is not here\n", path);
    skip();
}

int tw_test_exit(int failed)
{
    if (failed) return failed;
    if (!missing_data) return 0;
    const char *req = getenv("TW_REQUIRE_DATA");
    if (req && strcmp(req, "1") == 0) {
        fprintf(stderr, "FAIL: %d test(s) lacked their data and TW_REQUIRE_DATA=1\n", missing_data);
        return 1;
    }
    fprintf(stderr, "SKIP: %d test(s) skipped for missing data (the others passed)\n", missing_data);
    return 77;
}
