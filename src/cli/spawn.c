/* Running another program to its end (spawn.h). */
#include "cli/spawn.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int cli_self_exe(const char *cmd, char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0) {
        fprintf(stderr, "truewatt %s: cannot read /proc/self/exe: %s\n", cmd, strerror(errno));
        return -1;
    }
    buf[n] = '\0';
    return 0;
}

bool cli_is_file(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *cli_find_command(const char *cmd)
{
    if (strchr(cmd, '/')) {
        if (access(cmd, X_OK) != 0) return NULL;
        return strdup(cmd);
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    for (const char *p = path;;) {
        size_t len = strcspn(p, ":");
        char full[PATH_MAX];
        int k = snprintf(full, sizeof full, "%.*s%s%s", (int)len, len ? p : ".", "/", cmd);
        if (k > 0 && (size_t)k < sizeof full && cli_is_file(full)) {
            if (access(full, X_OK) == 0) return strdup(full);
            err = EACCES;
        }
        if (!p[len]) break;
        p += len + 1;
    }
    errno = err;
    return NULL;
}

int cli_find_program(const char *name, char *buf, size_t cap)
{
    char *found = cli_find_command(name);
    if (!found) return -1;
    snprintf(buf, cap, "%s", found);
    free(found);
    return 0;
}

int cli_find_ncu(const char *cmd, const char *ncu, char *buf, size_t cap)
{
    if (cli_find_program(ncu, buf, cap) == 0) return 0;
    fprintf(stderr, "truewatt %s: Nsight Compute ('%s') not found: install it or name it with --ncu\n", cmd, ncu);
    return 1;
}

int cli_spawn_wait(const char *cmd, char *const argv[], const char *out_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (out_path) posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "truewatt %s: cannot run %s: %s\n", cmd, argv[0], strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "truewatt %s: waiting for %s: %s\n", cmd, argv[0], strerror(errno));
            return -1;
        }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
