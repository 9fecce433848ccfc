/* gres_conf - the node's GPUs as Slurm numbers them (gres_conf.h says why). */
#include "slurm/gres_conf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NAME_LEN 512

/* ---------------------------------------------------------------- host and file lists */

/* One name with brackets: the first "[...]" expanded, the rest by recursion. */
static int expand_one(const char *name, int (*fn)(void *, const char *), void *user)
{
    const char *open = strchr(name, '[');
    if (!open) return strchr(name, ']') ? -1 : fn(user, name);
    const char *close = strchr(open, ']');
    if (!close) return -1;
    char head[NAME_LEN], body[NAME_LEN];
    size_t hl = (size_t)(open - name), bl = (size_t)(close - open - 1);
    if (hl >= NAME_LEN || bl >= NAME_LEN || bl == 0) return -1;
    memcpy(head, name, hl);
    head[hl] = '\0';
    memcpy(body, open + 1, bl);
    body[bl] = '\0';
    for (char *save = NULL, *item = strtok_r(body, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *end;
        if (!isdigit((unsigned char)item[0])) return -1;
        unsigned long a = strtoul(item, &end, 10), b = a;
        int width = (int)(end - item);
        if (*end == '-') {
            char *e2;
            if (!isdigit((unsigned char)end[1])) return -1;
            b = strtoul(end + 1, &e2, 10);
            end = e2;
        }
        if (*end || b < a || b - a > 65536) return -1;
        for (unsigned long k = a; k <= b; k++) {
            char next[NAME_LEN];
            int len = snprintf(next, sizeof next, "%s%0*lu%s", head, item[0] == '0' ? width : 0, k, close + 1);
            if (len < 0 || len >= NAME_LEN) return -1;
            int rc = expand_one(next, fn, user);
            if (rc) return rc;
        }
    }
    return 0;
}

int gres_expand(const char *list, int (*fn)(void *user, const char *name), void *user)
{
    size_t len = strlen(list);
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i <= len; i++) { /* split at the commas outside brackets */
        char c = list[i];
        if (c == '[') depth++;
        if (c == ']') depth--;
        if (depth < 0) return -1;
        if (c != '\0' && !(c == ',' && depth == 0)) continue;
        char name[NAME_LEN];
        if (i == start || i - start >= NAME_LEN) return -1;
        memcpy(name, list + start, i - start);
        name[i - start] = '\0';
        int rc = expand_one(name, fn, user);
        if (rc) return rc;
        start = i + 1;
    }
    return depth == 0 ? 0 : -1;
}

typedef struct nth {
    size_t k, seen;
    char *out;
    size_t cap;
    bool found;
} nth;

static int take_nth(void *user, const char *name)
{
    nth *x = user;
    if (x->seen++ != x->k) return 0;
    snprintf(x->out, x->cap, "%s", name);
    x->found = true;
    return 1; /* stop */
}

int gres_nth_name(const char *list, size_t k, char *out, size_t cap)
{
    nth x = {k, 0, out, cap, false};
    (void)gres_expand(list, take_nth, &x); /* stops early (nonzero) once found */
    return x.found ? 0 : -1;
}

/* ---------------------------------------------------------------- gres.conf */

typedef struct node_match {
    const char *node;
    bool found;
} node_match;

static int match_node(void *user, const char *name)
{
    node_match *m = user;
    if (strcmp(name, m->node) == 0) m->found = true;
    return 0;
}

typedef struct file_add {
    gres_gpus *out;
    bool bad, full;
} file_add;

/* A device file's number: its trailing digits, as slurmd reads them. */
static int add_file(void *user, const char *name)
{
    file_add *f = user;
    size_t len = strlen(name), k = len;
    while (k > 0 && isdigit((unsigned char)name[k - 1]))
        k--;
    if (k == len) {
        f->bad = true;
        return -1;
    }
    if (f->out->n == GRES_MAX_GPUS) {
        f->full = true;
        return -1;
    }
    f->out->devnum[f->out->n++] = (unsigned)strtoul(name + k, NULL, 10);
    return 0;
}

/* One line's KEY=VALUE pairs (keys case-insensitive, as Slurm reads them). */
typedef struct line_kv {
    const char *node, *name, *file, *autodetect;
} line_kv;

static int split_line(char *line, line_kv *kv, char *why, size_t why_len)
{
    memset(kv, 0, sizeof *kv);
    for (char *save = NULL, *tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            snprintf(why, why_len, "'%s' is not KEY=VALUE", tok);
            return -1;
        }
        *eq = '\0';
        const char *v = eq + 1;
        if (strcasecmp(tok, "NodeName") == 0)
            kv->node = v;
        else if (strcasecmp(tok, "Name") == 0)
            kv->name = v;
        else if (strcasecmp(tok, "File") == 0)
            kv->file = v;
        else if (strcasecmp(tok, "AutoDetect") == 0)
            kv->autodetect = v;
        else if (strcasecmp(tok, "Include") == 0) {
            snprintf(why, why_len, "Include is not read: give the plugin the included file (gres_conf=)");
            return -1;
        }
    }
    return 0;
}

int gres_conf_parse(const char *text, const char *path, const char *node, gres_gpus *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    bool autodetect = false;
    int lineno = 0;
    for (const char *p = text; *p;) {
        lineno++;
        size_t len = strcspn(p, "\n");
        char line[4096], why[512] = "";
        if (len >= sizeof line) {
            snprintf(err, err_len, "%s line %d: too long", path, lineno);
            return -1;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (p[len] == '\n');
        line[strcspn(line, "#")] = '\0';
        line_kv kv;
        if (split_line(line, &kv, why, sizeof why) != 0) {
            snprintf(err, err_len, "%s line %d: %s", path, lineno, why);
            return -1;
        }
        if (kv.node) {
            node_match m = {node, false};
            if (gres_expand(kv.node, match_node, &m) != 0) {
                snprintf(err, err_len, "%s line %d: NodeName=%s is not a host list", path, lineno, kv.node);
                return -1;
            }
            if (!m.found) continue; /* another node's line */
        }
        if (kv.autodetect) autodetect = strcasecmp(kv.autodetect, "nvml") == 0;
        if (!kv.name || strcmp(kv.name, "gpu") != 0 || !kv.file) continue;
        file_add f = {out, false, false};
        if (gres_expand(kv.file, add_file, &f) != 0) {
            snprintf(err, err_len, "%s line %d: File=%s: %s", path, lineno, kv.file,
                     f.full  ? "more than 64 GPUs"
                     : f.bad ? "a file name that does not end in its device number (/dev/nvidiaN)"
                             : "not a file list");
            return -1;
        }
    }
    out->autodetect = autodetect && out->n == 0;
    return 0;
}

int gres_conf_read(const char *path, const char *node, gres_gpus *out, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len, "%s: cannot read it", path);
        return -1;
    }
    char *text = calloc(1, 1 << 20);
    if (text) (void)!fread(text, 1, (1 << 20) - 1, f); /* NUL-terminated by calloc */
    fclose(f);
    if (!text) {
        snprintf(err, err_len, "%s: out of memory", path);
        return -1;
    }
    int rc = gres_conf_parse(text, path, node, out, err, err_len);
    free(text);
    return rc;
}
