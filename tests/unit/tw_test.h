/* Helpers shared by the unit tests. Include after <cmocka.h>'s prerequisites. */
#ifndef TW_TEST_H
#define TW_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Writes `text` to a fresh file under $TW_TMPDIR (or /tmp) and returns its
 * path in a static buffer per call slot (slot 0..7). */
const char *tw_test_file(int slot, const char *text);
/* A path for an output file in the temp dir (slot 0..7). */
const char *tw_test_path(int slot, const char *name);
/* Whole content of a file (malloc'd, caller frees), NULL if unreadable. */
char *tw_test_slurp(const char *path);
/* Runs a shell command; returns its exit status (-1 when it did not exit)
 * and, if out, its stdout (malloc'd, caller frees). */
int tw_test_run(const char *cmd, char **out);

/* Data the test needs from outside the tree (../shared): when `path` cannot
 * be read, says so on stderr ("SKIP: ... needs PATH"), remembers it and
 * skips the current test (cmocka's skip()). Returns only when it is there. */
void tw_test_need_data(const char *path);
/* main's exit status: the failures, else 77 (ctest's skip, SKIP_RETURN_CODE)
 * when a test lacked its data, so a missing file never passes in silence and
 * a skip never hides a failure. With TW_REQUIRE_DATA=1 in the environment
 * (a CI that has ../shared), missing data fails instead. */
int tw_test_exit(int failed);

#endif
