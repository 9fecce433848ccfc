#include "report/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *plot_find_gnuplot(void)
{
    static char path[4096];
    const char *env = getenv("PATH");
    if (!env) return NULL;
    const char *p = env;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len && len < sizeof path - 16) {
            snprintf(path, sizeof path, "%.*s/gnuplot", (int)len, p);
            if (access(path, X_OK) == 0) return path;
        }
        if (!end) break;
        p = end + 1;
    }
    return NULL;
}

int plot_run(const char *dir, const char *script, char *why, size_t why_len)
{
    const char *gp = plot_find_gnuplot();
    if (!gp) {
        snprintf(why, why_len, "gnuplot not found on PATH (install gnuplot-nox)");
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_len, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (chdir(dir) != 0) _exit(126);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
        execl(gp, "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, why_len, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    snprintf(why, why_len, "gnuplot failed on %s/%s (exit %d)", dir, script,
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
}
