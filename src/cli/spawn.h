/* Running another program to its end (ncu, truewatt itself): the commands
 * that profile through Nsight Compute or measure through `truewatt run`. */
#ifndef TW_CLI_SPAWN_H
#define TW_CLI_SPAWN_H

#include <stdbool.h>
#include <stddef.h>

/* This program's own path (/proc/self/exe); 0, or -1 with a message on stderr. */
int cli_self_exe(const char *cmd, char *buf, size_t cap);

/* A regular file (following links). */
bool cli_is_file(const char *path);

/* PATH lookup as execvp does it: a malloc'd path, or NULL with errno set (ENOENT, EACCES). */
char *cli_find_command(const char *cmd);

/* The same into buf: 0 when found. */
int cli_find_program(const char *name, char *buf, size_t cap);

/* Nsight Compute: the program that --ncu names (a path or a name on $PATH); 0, or 1 with a message. */
int cli_find_ncu(const char *cmd, const char *ncu, char *buf, size_t cap);

/* Runs argv (argv[0] searched on $PATH) with stdout going to out_path when
 * it is not NULL, waits, and returns its exit status; 128 + N when signal N
 * killed it; -1 when it could not start (message on stderr). */
int cli_spawn_wait(const char *cmd, char *const argv[], const char *out_path);

#endif
