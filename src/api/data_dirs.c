/* Where truewatt's data and injection library lie (tw_data_dir,
 * tw_profile_dir, tw_inject_library: truewatt.h).
 *
 * An installed tree may be moved (a packager's staging folder, a copy of
 * the prefix, a Python wheel): nothing installed names an absolute path.
 * The library finds its own file (dladdr) and looks for the data where the
 * install rules put it relative to the library's folder (TW_LIB_TO_DATA,
 * TW_LIB_TO_INJECT, computed by CMakeLists.txt from GNUInstallDirs, as the
 * CLI finds the library through $ORIGIN). A library that is not installed
 * (a build tree, where no such folder lies beside it) uses the source
 * tree's data/ it was built from, and the injection library built beside it.
 * The environment overrides both. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "truewatt.h"

#ifndef TW_SOURCE_DATA_DIR
#define TW_SOURCE_DATA_DIR "data"
#endif
#ifndef TW_LIB_TO_DATA
#define TW_LIB_TO_DATA "../share/truewatt"
#endif
#ifndef TW_LIB_TO_INJECT
#define TW_LIB_TO_INJECT "truewatt"
#endif
#define INJECT_NAME "libtruewatt-inject.so"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char data_dir[PATH_MAX], profile_dir[PATH_MAX + 16], inject_path[PATH_MAX + 64];

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The folder of the file this code was loaded from: libtruewatt.so, or the
 * program it is linked into statically; "" when it cannot be told. */
static void own_folder(char *out, size_t cap)
{
    Dl_info info;
    char real[PATH_MAX];
    out[0] = '\0';
    bool found = dladdr((void *)&tw_data_dir, &info) && info.dli_fname && info.dli_fname[0] == '/' &&
                 realpath(info.dli_fname, real);
    if (!found) { /* linked statically, glibc may name the program relatively: its own path */
        ssize_t n = readlink("/proc/self/exe", real, sizeof real - 1);
        if (n <= 0) return;
        real[n] = '\0';
    }
    char *slash = strrchr(real, '/');
    if (!slash) return;
    *slash = '\0';
    snprintf(out, cap, "%s", real[0] ? real : "/");
}

/* Once: the installed folders beside this library, else the build tree's. */
static void resolve(void)
{
    char here[PATH_MAX], path[PATH_MAX + 64];
    own_folder(here, sizeof here);
    snprintf(path, sizeof path, "%s/%s", here, TW_LIB_TO_DATA);
    char real[PATH_MAX];
    if (here[0] && is_dir(path) && realpath(path, real))
        snprintf(data_dir, sizeof data_dir, "%s", real);
    else
        snprintf(data_dir, sizeof data_dir, "%s", TW_SOURCE_DATA_DIR);
    snprintf(profile_dir, sizeof profile_dir, "%s/profiles", data_dir);
    snprintf(path, sizeof path, "%s/%s/%s", here, TW_LIB_TO_INJECT, INJECT_NAME);
    if (here[0] && is_file(path) && realpath(path, real))
        snprintf(inject_path, sizeof inject_path, "%s", real);
    else /* a build tree: built beside the library (CMakeLists.txt) */
        snprintf(inject_path, sizeof inject_path, "%s/%s", here[0] ? here : ".", INJECT_NAME);
}

const char *tw_data_dir(void)
{
    const char *env = getenv("TW_DATA_DIR");
    if (env && *env) return env;
    pthread_once(&once, resolve);
    return data_dir;
}

const char *tw_profile_dir(void)
{
    const char *env = getenv("TW_PROFILE_DIR");
    if (env && *env) return env;
    pthread_once(&once, resolve);
    return profile_dir;
}

const char *tw_inject_library(void)
{
    const char *env = getenv("TW_INJECT_LIBRARY");
    if (env && *env) return env;
    pthread_once(&once, resolve);
    return inject_path;
}
