/* Running another program to its end (spawn.h). */
#include "cli/spawn.h"

#include <errno.h>
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

static int executable(const char *p)
{
    struct stat s;
    return stat(p, &s) == 0 && S_ISREG(s.st_mode) && access(p, X_OK) == 0;
}

int cli_find_program(const char *name, char *buf, size_t cap)
{
    if (strchr(name, '/')) {
        snprintf(buf, cap, "%s", name);
        return executable(buf) ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        snprintf(buf, cap, "%.*s/%s", (int)len, len ? p : ".", name);
        if (executable(buf)) return 0;
        p += len + (p[len] == ':');
    }
    return -1;
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
