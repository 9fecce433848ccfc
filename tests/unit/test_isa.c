/* The instruction microbenchmarks (src/isa): the table covers every row of
 * Arafa et al.'s Table I and more; every entry's PTX is well formed in both
 * modes; and, where ptxas and nvdisasm exist, every generated module
 * assembles for sm_90 and every other architecture the local ptxas knows
 * (of 70, 75, 80, 86, 89, 90, 100, 120, from the entry's min_sm on), and the
 * loop of each kernel holds exactly the expected count of the entry's SASS
 * instruction (sequences: at least it), while the overhead kernel's loop
 * holds none. A mismatch fails naming the entry, mode,
 * architecture and counts, and prints the loop's SASS.
 *
 * Tools: ptxas from $TW_PTXAS, PATH or /usr/local/cuda/bin; nvdisasm from
 * $TW_NVDISASM, PATH, /usr/local/cuda/bin or the pip package
 * nvidia-cuda-nvdisasm (scripts/deps installs it). Without either, the SASS
 * part is skipped (exit 77, only when nothing else failed).
 *
 * To keep the run short, the modules of one mode and architecture are
 * assembled together: each entry's module verbatim, its header dropped and
 * its overhead kernel renamed (tw_isa_overhead -> tw_isa_<id>_ovh), so ptxas
 * and nvdisasm run once per mode and architecture; ptxas compiles every
 * kernel on its own, so its SASS is that of the module alone. A combined
 * module ptxas refuses is retried entry by entry to name the culprit. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tw_sass.h"
#include "tw_test.h"

#include "isa/isa.h"

/* ---------------------------------------------------------------- the table */

/* Every instruction the issue asks for, by entry name. */
static const char *const required[] = {
    "add.s32",
    "sub.s32",
    "min.s32",
    "max.s32",
    "mul.lo.s32",
    "mad.lo.s32",
    "div.s32",
    "rem.s32",
    "div.u32",
    "rem.u32",
    "abs.s32",
    "and.b32",
    "or.b32",
    "not.b32",
    "xor.b32",
    "cnot.b32",
    "shl.b32",
    "shr.u32",
    "shr.s32",
    "add.f32",
    "sub.f32",
    "min.f32",
    "max.f32",
    "mul.f32",
    "mad.rn.f32",
    "fma.rn.f32",
    "div.rn.f32",
    "add.f64",
    "sub.f64",
    "min.f64",
    "max.f64",
    "div.rn.f64",
    "fma.rn.f64",
    "add.f16",
    "sub.f16",
    "mul.f16",
    "add.f16x2",
    "sub.f16x2",
    "mul.f16x2",
    "fma.rn.f16x2",
    "add.cc.u32",
    "addc.cc.u32",
    "sub.cc.u32",
    "subc.cc.u32",
    "mad.lo.cc.u32",
    "madc.lo.cc.u32",
    "rcp.rn.f32",
    "sqrt.rn.f32",
    "sqrt.approx.f32",
    "rsqrt.approx.f32",
    "sin.approx.f32",
    "cos.approx.f32",
    "lg2.approx.f32",
    "ex2.approx.f32",
    "copysign.f32",
    "mul24.lo.u32",
    "mad24.lo.u32",
    "sad.u32",
    "popc.b32",
    "clz.b32",
    "bfind.u32",
    "mma.m16n8k16.f32.f16",
    "mma.m16n8k16.f32.bf16",
    "mma.m16n8k8.f32.tf32",
    "mma.m16n8k32.f32.e4m3",
    "ld.shared.u32",
    "st.shared.u32",
    "ld.global.u64",
    "st.global.u32",
    "shfl.sync.bfly.b32",
    "atom.shared.add.u32",
    "atom.global.add.u32",
};

/* The rows of Table I (Arafa et al. 2020), each reproduced by some entry. */
static const char *const paper_rows[] = {
    "add / sub / min / max",
    "mul / mad",
    "{s} div",
    "{s} rem",
    "abs",
    "{u} div",
    "{u} rem",
    "and / or / not / xor",
    "cnot",
    "shl / shr",
    "mul / mad / fma",
    "div",
    "add / sub / mul",
    "add.cc / addc / sub.cc",
    "subc",
    "mad.cc / madc",
    "rcp",
    "sqrt",
    "approx.sqrt",
    "rsqrt",
    "sin / cos",
    "lg2",
    "ex2",
    "copysign",
    "mul24() / mad24()",
    "sad()",
    "popc()",
    "clz()",
    "bfind()",
};

static const char *const groups[] = {"int",     "logic", "fp32",   "fp64",   "fp16", "multi-precision",
                                     "special", "bit",   "tensor", "memory", "warp", "atomic"};

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0) return 1;
    return 0;
}

static void test_table_complete(void **state)
{
    (void)state;
    size_t n = tw_isa_count();
    assert_true(n >= sizeof required / sizeof required[0]);
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (!tw_isa_find(required[i])) print_error("no table entry %s\n", required[i]);
        assert_non_null(tw_isa_find(required[i]));
    }
    for (size_t r = 0; r < sizeof paper_rows / sizeof paper_rows[0]; r++) {
        int found = 0;
        for (size_t i = 0; i < n; i++)
            if (tw_isa_get(i)->paper_row && strcmp(tw_isa_get(i)->paper_row, paper_rows[r]) == 0) found = 1;
        if (!found) print_error("Table I row '%s' has no entry\n", paper_rows[r]);
        assert_true(found);
    }
    assert_null(tw_isa_get(n));
    assert_null(tw_isa_find("no.such.instruction"));
    assert_null(tw_isa_find(NULL));
}

static void test_table_fields(void **state)
{
    (void)state;
    size_t n = tw_isa_count();
    for (size_t i = 0; i < n; i++) {
        const tw_isa_entry *e = tw_isa_get(i);
        assert_non_null(e->name);
        assert_non_null(e->ptx);
        assert_non_null(e->reg_type);
        assert_non_null(e->sass);
        if (!in_list(e->group, groups, sizeof groups / sizeof groups[0]))
            print_error("%s: group %s\n", e->name, e->group);
        assert_true(in_list(e->group, groups, sizeof groups / sizeof groups[0]));
        if (e->paper_row) assert_true(in_list(e->paper_row, paper_rows, sizeof paper_rows / sizeof paper_rows[0]));
        assert_true(e->min_sm == 70 || e->min_sm == 80 || e->min_sm == 89 || e->min_sm == 90);
        assert_true(e->sass_per_ptx >= 0);
        if (e->sass_per_ptx == 0) assert_true(e->sass_min >= 1); /* a sequence names its least count */
        assert_ptr_equal(tw_isa_find(e->name), e);
        regex_t re;
        int rc = regcomp(&re, e->sass, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) print_error("%s: bad SASS regex /%s/\n", e->name, e->sass);
        assert_int_equal(rc, 0);
        regfree(&re);
        char k1[128], k2[128];
        tw_isa_kernel_name(e, k1, sizeof k1);
        for (size_t j = 0; j < i; j++) { /* names and kernel names are unique */
            assert_string_not_equal(e->name, tw_isa_get(j)->name);
            tw_isa_kernel_name(tw_isa_get(j), k2, sizeof k2);
            assert_string_not_equal(k1, k2);
        }
    }
}

static void test_kernel_name(void **state)
{
    (void)state;
    char k[64];
    tw_isa_kernel_name(tw_isa_find("add.s32"), k, sizeof k);
    assert_string_equal(k, "tw_isa_add_s32");
    tw_isa_kernel_name(tw_isa_find("mma.m16n8k16.f32.f16"), k, sizeof k);
    assert_string_equal(k, "tw_isa_mma_m16n8k16_f32_f16");
    tw_isa_kernel_name(tw_isa_find("add.s32"), k, 10); /* truncated, still terminated */
    assert_string_equal(k, "tw_isa_ad");
    assert_int_equal(tw_isa_per_round(TW_ISA_PAPER), TW_ISA_CHAIN);
    assert_int_equal(tw_isa_per_round(TW_ISA_THROUGHPUT), TW_ISA_CHAIN * TW_ISA_CHAINS);
}

/* ---------------------------------------------------------------- the PTX text */

/* The target instruction of a template: its last instruction that is not
 * glue ('~'), as "mnemonic " (up to the first blank). */
static void target_mnemonic(const tw_isa_entry *e, char *out, size_t cap)
{
    out[0] = '\0';
    const char *s = e->ptx;
    while (*s) {
        while (*s == ' ')
            s++;
        const char *semi = strchr(s, ';');
        size_t len = semi ? (size_t)(semi - s) : strlen(s);
        if (len > 0 && s[0] != '~') {
            size_t m = strcspn(s, " ");
            if (m > len) m = len;
            snprintf(out, cap, "%.*s ", (int)m, s);
        }
        s += len;
        if (*s == ';') s++;
    }
}

/* Lines of kernel `kname`'s loop (between "$L_loop:" and its back branch)
 * that start with `mnemonic`; -1 when the kernel or its loop is missing. */
static int ptx_loop_count(const char *ptx, const char *kname, const char *mnemonic)
{
    char head[160];
    snprintf(head, sizeof head, ".visible .entry %s(", kname);
    const char *k = strstr(ptx, head);
    if (!k) return -1;
    const char *lo = strstr(k, "$L_loop:\n");
    const char *hi = lo ? strstr(lo, "@%pq0 bra $L_loop;") : NULL;
    if (!lo || !hi) return -1;
    int n = 0;
    for (const char *l = lo; l && l < hi; l = strchr(l, '\n')) {
        l++;
        while (*l == ' ')
            l++;
        if (strncmp(l, mnemonic, strlen(mnemonic)) == 0) n++;
    }
    return n;
}

static void test_ptx_text(void **state)
{
    (void)state;
    for (size_t i = 0; i < tw_isa_count(); i++) {
        const tw_isa_entry *e = tw_isa_get(i);
        char kname[128], mn[160];
        tw_isa_kernel_name(e, kname, sizeof kname);
        target_mnemonic(e, mn, sizeof mn);
        assert_true(strlen(mn) > 1);
        for (int m = 0; m < 2; m++) {
            char *ptx = tw_isa_ptx(e, (tw_isa_mode)m, 90);
            if (!ptx) print_error("%s: %s\n", e->name, tw_last_error());
            assert_non_null(ptx);
            assert_non_null(strstr(ptx, ".target sm_90\n"));
            assert_non_null(strstr(ptx, ".address_size 64\n"));
            assert_true(strncmp(strstr(ptx, ".version "), ".version 8.", 10) == 0);
            assert_non_null(strstr(ptx, ".pragma \"nounroll\";"));
            const char *loop = strstr(ptx, "$L_loop:\n"), *back = loop ? strstr(loop, "@%pq0 bra $L_loop;") : NULL;
            assert_non_null(back);
            assert_null(memchr(loop, '<', (size_t)(back - loop))); /* every slot filled */
            int found = ptx_loop_count(ptx, kname, mn);
            if (found != tw_isa_per_round((tw_isa_mode)m))
                print_error("%s, mode %d: %d copies of '%s' in the loop, expected %d\n", e->name, m, found, mn,
                            tw_isa_per_round((tw_isa_mode)m));
            assert_int_equal(found, tw_isa_per_round((tw_isa_mode)m));
            assert_int_equal(ptx_loop_count(ptx, "tw_isa_overhead", mn), 0); /* present, without the target */
            if (m == TW_ISA_THROUGHPUT)
                assert_int_equal(ptx_loop_count(ptx, TW_ISA_RESIDENT, "nanosleep.u32"), 1);
            else
                assert_null(strstr(ptx, TW_ISA_RESIDENT));
            free(ptx);
        }
    }
}

static void test_ptx_errors(void **state)
{
    (void)state;
    const tw_isa_entry *add = tw_isa_find("add.s32");
    assert_null(tw_isa_ptx(NULL, TW_ISA_PAPER, 90));
    assert_null(tw_isa_ptx(add, (tw_isa_mode)7, 90));
    assert_non_null(strstr(tw_last_error(), "mode"));
    assert_null(tw_isa_ptx(add, TW_ISA_PAPER, 9));
    /* fp8 mma needs sm_89 */
    assert_null(tw_isa_ptx(tw_isa_find("mma.m16n8k32.f32.e4m3"), TW_ISA_PAPER, 80));
    assert_non_null(strstr(tw_last_error(), "sm_89"));
    char *ok = tw_isa_ptx(tw_isa_find("mma.m16n8k32.f32.e4m3"), TW_ISA_PAPER, 89);
    assert_non_null(ok);
    assert_non_null(strstr(ok, ".version 8.4\n")); /* fp8 mma.sync needs PTX ISA 8.4 */
    free(ok);
    ok = tw_isa_ptx(add, TW_ISA_THROUGHPUT, 120);
    assert_non_null(strstr(ok, ".target sm_120\n"));
    free(ok);
    /* a malformed entry is refused with its name */
    tw_isa_entry bad = *add;
    bad.name = "bad.slot";
    bad.ptx = "add.s32 <d>, <a>, <zz>;";
    assert_null(tw_isa_ptx(&bad, TW_ISA_PAPER, 90));
    assert_non_null(strstr(tw_last_error(), "<zz>"));
    assert_non_null(strstr(tw_last_error(), "bad.slot"));
    bad.ptx = "add.s32 <d>, <a>, <b;";
    assert_null(tw_isa_ptx(&bad, TW_ISA_PAPER, 90));
    bad.ptx = "add.s32 <d>, <a>, <p>;";
    bad.reg_type = "u128";
    assert_null(tw_isa_ptx(&bad, TW_ISA_PAPER, 90));
    assert_non_null(strstr(tw_last_error(), "u128"));
    bad.reg_type = "u32";
    bad.ptx = "mul.f32 <d>, <a>, <m>;"; /* a reciprocal of an integer */
    assert_null(tw_isa_ptx(&bad, TW_ISA_PAPER, 90));
    /* a fixed start that cannot be: an integer does not saturate, an mma fragment or an address is no value */
    bad.ptx = "add.s32 <d>, <a>, <p>;";
    bad.start = TW_ISA_START_SATURATED;
    assert_null(tw_isa_ptx(&bad, TW_ISA_THROUGHPUT, 90));
    assert_non_null(strstr(tw_last_error(), "saturated start"));
    ok = tw_isa_ptx(&bad, TW_ISA_PAPER, 90); /* paper mode always starts from the seed */
    assert_non_null(ok);
    free(ok);
    tw_isa_entry mma = *tw_isa_find("mma.m16n8k16.f32.f16");
    mma.start = TW_ISA_START_ZERO;
    assert_null(tw_isa_ptx(&mma, TW_ISA_THROUGHPUT, 90));
    assert_non_null(strstr(tw_last_error(), "mma fragments"));
}

/* Throughput mode's fixed starts: chosen at run time (a select on the seed,
 * never 0), in every chain register; paper mode has none. */
static void test_fixed_start(void **state)
{
    (void)state;
    static const struct {
        const char *name, *bits;
    } want[] = {{"add.s32", ", 0, %pq1;"},
                {"fma.rn.f32", ", 0f4C800000, %pq1;"},
                {"add.f64", ", 0d4360000000000000, %pq1;"},
                {"add.f16", ", 0x6C00, %pq1;"},
                {"fma.rn.bf16x2", ", 0x44004400, %pq1;"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const tw_isa_entry *e = tw_isa_find(want[i].name);
        assert_non_null(e);
        char *t = tw_isa_ptx(e, TW_ISA_THROUGHPUT, 90), *pp = tw_isa_ptx(e, TW_ISA_PAPER, 90);
        assert_non_null(t);
        assert_non_null(pp);
        int n = 0;
        for (const char *q = t; (q = strstr(q, want[i].bits)) != NULL; q++)
            n++;
        /* two registers per chain, in the kernel and in the overhead kernel */
        if (n != 2 * 2 * TW_ISA_CHAINS) fail_msg("%s: %d fixed starts, expected %d", e->name, n, 4 * TW_ISA_CHAINS);
        assert_non_null(strstr(t, "setp.eq.u64 %pq1, %seed, 0;"));
        assert_null(strstr(pp, want[i].bits));
        assert_string_equal(tw_isa_operands(e, TW_ISA_THROUGHPUT),
                            e->start == TW_ISA_START_ZERO ? "fixed at 0" : "fixed (saturated)");
        assert_string_equal(tw_isa_operands(e, TW_ISA_PAPER), "from the seed");
        free(t);
        free(pp);
    }
    assert_string_equal(tw_isa_operands(tw_isa_find("mul.f32"), TW_ISA_THROUGHPUT), "from the seed");
}

/* Scalar half chains: in throughput mode ptxas packs each pair of the
 * independent chains into one HADD2/HMUL2 (both halves busy), on every
 * architecture tested; each SASS instruction then does two PTX ones. */
static int ptx_per_sass(const tw_isa_entry *e, tw_isa_mode m)
{
    return m == TW_ISA_THROUGHPUT && strcmp(e->reg_type, "f16") == 0 ? 2 : 1;
}

static const int archs[] = {70, 75, 80, 86, 89, 90, 100, 120};

typedef struct ctx {
    char ptxas[1024], nvdisasm[1024];
    int failures, checks;
} ctx;

/* Assembles entry e alone to name what ptxas refuses (after a combined module failed). */
static void blame(ctx *c, int sm, tw_isa_mode m)
{
    const char *pf = tw_test_path(2, "isa-one.ptx");
    for (size_t i = 0; i < tw_isa_count(); i++) {
        const tw_isa_entry *e = tw_isa_get(i);
        if (sm < e->min_sm) continue;
        char *ptx = tw_isa_ptx(e, m, sm);
        assert_non_null(ptx);
        FILE *f = fopen(pf, "w");
        assert_non_null(f);
        fputs(ptx, f);
        fclose(f);
        free(ptx);
        char cmd[4096], *log = NULL;
        snprintf(cmd, sizeof cmd, "'%s' -arch=sm_%d -o /dev/null '%s' 2>&1", c->ptxas, sm, pf);
        if (tw_test_run(cmd, &log) != 0) {
            fprintf(stderr, "FAIL isa: %s, %s mode, sm_%d: ptxas refuses the module:\n%s\n", e->name,
                    m == TW_ISA_PAPER ? "paper" : "throughput", sm, log);
            c->failures++;
        }
        free(log);
    }
    unlink(pf);
}

/* Every entry of mode m for sm: assemble, disassemble, count. */
/* Throughput mode's resident kernel: a loop that sleeps (NANOSLEEP) and
 * holds none of the entry's instruction. */
static void check_resident(ctx *c, const sass *s, const char *kname, const regex_t *re, const char *mode, int sm,
                           const tw_isa_entry *e)
{
    char res[160];
    snprintf(res, sizeof res, "%s_res", kname);
    regex_t sleep;
    assert_int_equal(regcomp(&sleep, "^NANOSLEEP", REG_EXTENDED | REG_NOSUB), 0);
    const kernel *k = sass_kernel(s, res);
    int lo = 0, hi = -1;
    bool loop = k && sass_loop(k, &lo, &hi);
    int sleeps = loop ? count_matches(k, lo, hi, &sleep) : -1, targets = loop ? count_matches(k, lo, hi, re) : -1;
    if (sleeps != 1 || targets != 0) {
        fprintf(stderr, "FAIL isa: %s, %s mode, sm_%d: the resident kernel's loop %s (NANOSLEEP %d, /%s/ %d):\n",
                e->name, mode, sm, loop ? "is not one sleep without the target" : "is missing", sleeps, e->sass,
                targets);
        if (k) print_loop(k, lo, hi);
        c->failures++;
    }
    regfree(&sleep);
}

static void check_arch(ctx *c, int sm, tw_isa_mode m)
{
    const char *mode = m == TW_ISA_PAPER ? "paper" : "throughput";
    text t = {0};
    int version = 80;
    for (size_t i = 0; i < tw_isa_count(); i++) {
        const tw_isa_entry *e = tw_isa_get(i);
        if (sm < e->min_sm) continue;
        char *ptx = tw_isa_ptx(e, m, sm);
        if (!ptx) print_error("%s, %s mode, sm_%d: %s\n", e->name, mode, sm, tw_last_error());
        assert_non_null(ptx);
        int maj = 0, min = 0;
        const char *v = strstr(ptx, ".version ");
        assert_non_null(v);
        assert_int_equal(sscanf(v, ".version %d.%d", &maj, &min), 2);
        if (maj * 10 + min > version) version = maj * 10 + min;
        const char *body = strstr(ptx, ".address_size 64\n");
        assert_non_null(body);
        body += strlen(".address_size 64\n");
        char kname[128], ovh[160], res[160];
        tw_isa_kernel_name(e, kname, sizeof kname);
        snprintf(ovh, sizeof ovh, "%s_ovh", kname);
        snprintf(res, sizeof res, "%s_res", kname);
        text once = {0};
        put_replaced(&once, body, "tw_isa_overhead", ovh);
        put_replaced(&t, once.p, TW_ISA_RESIDENT, res);
        free(once.p);
        free(ptx);
    }
    char head[128];
    snprintf(head, sizeof head, ".version %d.%d\n.target sm_%d\n.address_size 64\n", version / 10, version % 10, sm);
    const char *pf = tw_test_path(0, "isa.ptx"), *cf = tw_test_path(1, "isa.cubin");
    FILE *f = fopen(pf, "w");
    assert_non_null(f);
    fputs(head, f);
    fputs(t.p, f);
    assert_int_equal(fclose(f), 0);
    free(t.p);

    char cmd[4096], *log = NULL;
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_%d -o '%s' '%s' 2>&1", c->ptxas, sm, cf, pf);
    if (tw_test_run(cmd, &log) != 0) {
        fprintf(stderr, "FAIL isa: ptxas refuses the %s-mode modules for sm_%d:\n%.4000s\n", mode, sm, log);
        c->failures++;
        free(log);
        blame(c, sm, m);
        unlink(pf);
        return;
    }
    free(log);
    unlink(pf);
    snprintf(cmd, sizeof cmd, "'%s' -c '%s' 2>&1", c->nvdisasm, cf);
    char *out = NULL;
    int rc = tw_test_run(cmd, &out);
    unlink(cf);
    if (rc != 0) {
        fprintf(stderr, "FAIL isa: nvdisasm, sm_%d: %.2000s\n", sm, out);
        free(out);
        c->failures++;
        return;
    }
    sass s;
    sass_parse(out, &s);

    for (size_t i = 0; i < tw_isa_count(); i++) {
        const tw_isa_entry *e = tw_isa_get(i);
        if (sm < e->min_sm) continue;
        char kname[128], ovh[160];
        tw_isa_kernel_name(e, kname, sizeof kname);
        snprintf(ovh, sizeof ovh, "%s_ovh", kname);
        regex_t re;
        assert_int_equal(regcomp(&re, e->sass, REG_EXTENDED | REG_NOSUB), 0);
        c->checks++;
        const kernel *k = sass_kernel(&s, kname);
        int lo = 0, hi = -1;
        if (!k || !sass_loop(k, &lo, &hi)) {
            fprintf(stderr, "FAIL isa: %s, %s mode, sm_%d: %s\n", e->name, mode, sm,
                    k ? "no loop in the SASS of the kernel" : "kernel missing from the SASS");
            if (k) print_loop(k, 0, -1);
            c->failures++;
            regfree(&re);
            continue;
        }
        int per = e->sass_per_ptx ? e->sass_per_ptx : e->sass_min;
        int want = per * tw_isa_per_round(m) / ptx_per_sass(e, m);
        int found = count_matches(k, lo, hi, &re);
        int ok = e->sass_per_ptx ? found == want : found >= want;
        if (!ok) {
            fprintf(stderr,
                    "FAIL isa: %s, %s mode, sm_%d: expected %s%d SASS instructions matching /%s/ in the loop of %s, "
                    "found %d; the loop's SASS:\n",
                    e->name, mode, sm, e->sass_per_ptx ? "" : "at least ", want, e->sass, kname, found);
            print_loop(k, lo, hi);
            c->failures++;
        }
        if (m == TW_ISA_THROUGHPUT) check_resident(c, &s, kname, &re, mode, sm, e);
        const kernel *o = sass_kernel(&s, ovh);
        int olo = 0, ohi = -1;
        int ofound = o && sass_loop(o, &olo, &ohi) ? count_matches(o, olo, ohi, &re) : -1;
        if (ofound != 0) {
            fprintf(stderr, "FAIL isa: %s, %s mode, sm_%d: the overhead kernel's loop %s /%s/ (%d):\n", e->name, mode,
                    sm, ofound < 0 ? "is missing, so it cannot be checked for" : "matches", e->sass, ofound);
            if (o) print_loop(o, olo, ohi);
            c->failures++;
        }
        regfree(&re);
    }
    sass_free(&s);
}

static int tools_found = -1;

static void test_sass(void **state)
{
    (void)state;
    ctx c;
    memset(&c, 0, sizeof c);
    if (!find_tool("TW_PTXAS", "ptxas", c.ptxas, sizeof c.ptxas) ||
        (!find_tool("TW_NVDISASM", "nvdisasm", c.nvdisasm, sizeof c.nvdisasm) &&
         !find_pip_nvdisasm(c.nvdisasm, sizeof c.nvdisasm))) {
        tools_found = 0;
        skip();
    }
    tools_found = 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);

    /* the architectures this ptxas knows */
    char cmd[2048], *help = NULL;
    snprintf(cmd, sizeof cmd, "'%s' --help 2>&1", c.ptxas);
    tw_test_run(cmd, &help);
    int use[sizeof archs / sizeof archs[0]], n_use = 0;
    char list[256] = "";
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        char quoted[16];
        snprintf(quoted, sizeof quoted, "'sm_%d'", archs[i]);
        if (strstr(help, quoted)) {
            use[n_use++] = archs[i];
            snprintf(list + strlen(list), sizeof list - strlen(list), " sm_%d", archs[i]);
        }
    }
    free(help);
    int has90 = 0;
    for (int i = 0; i < n_use; i++)
        has90 |= use[i] == 90;
    if (!has90) print_error("%s does not list sm_90 (too old a CUDA toolkit?)\n", c.ptxas);
    assert_true(has90);

    for (int i = 0; i < n_use; i++)
        for (int m = 0; m < 2; m++)
            check_arch(&c, use[i], (tw_isa_mode)m);

    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    fprintf(stderr, "isa: %d kernels checked (%zu entries x 2 modes on%s) with %s and %s in %.1f s: %d failures\n",
            c.checks, tw_isa_count(), list, c.ptxas, c.nvdisasm, secs, c.failures);
    assert_int_equal(c.failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_complete), cmocka_unit_test(test_table_fields), cmocka_unit_test(test_kernel_name),
        cmocka_unit_test(test_ptx_text),       cmocka_unit_test(test_ptx_errors),   cmocka_unit_test(test_fixed_start),
        cmocka_unit_test(test_sass),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (tools_found == 0) {
        fprintf(stderr, "skipping the SASS checks: ptxas or nvdisasm not found (scripts/deps installs "
                        "nvidia-cuda-nvdisasm; or set TW_PTXAS / TW_NVDISASM)\n");
        return failed ? failed : 77;
    }
    return failed;
}
