/* The pointer-chase microbenchmarks (src/mem/chase.c): the layout follows
 * Delestrac et al.'s (a thread's words a step apart, the block's threads on
 * consecutive words), bad configurations are refused with a reason, and,
 * where ptxas and nvdisasm exist, every level's module assembles for sm_80
 * and sm_90 with one load in the warm-up loop and exactly `unroll` loads of
 * the level's kind in the measurement loop: LDS for shared memory, a weak
 * LDG (cached in L1) for L1, LDG.STRONG.GPU (L2 only) for L2 and DRAM. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_sass.h"
#include "tw_test.h"

#include "core/error.h"
#include "isa/isa.h"
#include "mem/chase.h"

static void test_layout(void **state)
{
    (void)state;
    tw_chase_layout l;
    tw_chase_config c = {TW_MEM_L1, 1, 65536, 32, 8, TW_CHASE_LOAD};
    assert_int_equal(tw_chase_layout_of(&c, &l), 0);
    assert_int_equal(l.step_words, 4); /* one thread: a word per sector */
    assert_int_equal(l.ring, 2048);
    assert_true(l.sectors_per_pass == 2048); /* every step its own sector */
    c.threads = 4;
    assert_int_equal(tw_chase_layout_of(&c, &l), 0);
    assert_int_equal(l.step_words, 4); /* four threads share each sector */
    assert_true(l.sectors_per_pass == 2048);
    c.threads = 256;
    assert_int_equal(tw_chase_layout_of(&c, &l), 0);
    assert_int_equal(l.step_words, 256);
    assert_int_equal(l.ring, 32);
    assert_true(l.sectors_per_pass == 32 * 64); /* 256 words = 64 sectors per step */
    assert_string_equal(tw_mem_level_name(TW_MEM_DRAM), "dram");
}

static void refused(tw_chase_config c, const char *why)
{
    tw_chase_layout l;
    assert_int_equal(tw_chase_layout_of(&c, &l), -1);
    if (!strstr(tw_last_error(), why)) fail_msg("'%s' does not say '%s'", tw_last_error(), why);
    assert_null(tw_chase_ptx(&c, 90));
}

static void test_refused(void **state)
{
    (void)state;
    refused((tw_chase_config){TW_MEM_L1, 0, 65536, 32, 8, TW_CHASE_LOAD}, "threads per block");
    refused((tw_chase_config){TW_MEM_L1, 2048, 65536, 32, 8, TW_CHASE_LOAD}, "threads per block");
    refused((tw_chase_config){TW_MEM_L1, 32, 65536, 24, 8, TW_CHASE_LOAD}, "granularity");
    refused((tw_chase_config){TW_MEM_L1, 1024, 8192, 32, 8, TW_CHASE_LOAD}, "two steps");
    refused((tw_chase_config){TW_MEM_SHARED, 32, 65536, 32, 8, TW_CHASE_LOAD}, "shared memory");
    refused((tw_chase_config){TW_MEM_L2, 32, 65536, 32, 7, TW_CHASE_LOAD}, "unroll");
    refused((tw_chase_config){(tw_mem_level)9, 32, 65536, 32, 8, TW_CHASE_LOAD}, "level");
    refused((tw_chase_config){TW_MEM_L1, 32, 65536, 32, 8, TW_CHASE_STORE}, "no L1 store level");
    refused((tw_chase_config){TW_MEM_L2, 32, 65536, 32, 8, (tw_chase_op)7}, "operation");
    assert_int_equal(tw_chase_op_parse("load+div"), TW_CHASE_LOAD_DIV);
    assert_int_equal(tw_chase_op_parse("stor"), -1);
    tw_chase_config ok = {TW_MEM_L2, 32, 65536, 32, 8, TW_CHASE_LOAD};
    assert_null(tw_chase_ptx(&ok, 60));
    assert_non_null(strstr(tw_last_error(), "sm_70"));
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void test_ptx(void **state)
{
    (void)state;
    static const char *const load[] = {"ld.shared.u32 %r32, [%p];", "ld.global.u64 %p, [%p];",
                                       "ld.global.cg.u64 %p, [%p];", "ld.global.cg.u64 %p, [%p];"};
    for (int lv = 0; lv < TW_MEM_LEVELS; lv++) {
        tw_chase_config c = {(tw_mem_level)lv, 128, lv == TW_MEM_SHARED ? 32768 : 1 << 20, 32, 16, TW_CHASE_LOAD};
        char *p = tw_chase_ptx(&c, 90);
        assert_non_null(p);
        assert_int_equal(count(p, load[lv]), 1 + 16);           /* warm-up + measurement */
        assert_int_equal(count(p, ".pragma \"nounroll\";"), 4); /* ring, warm-up, measurement, resident */
        assert_int_equal(count(p, "\n.shared .align 8 .b8 tw_chase_smem["), lv == TW_MEM_SHARED ? 1 : 0);
        assert_non_null(strstr(p, ".visible .entry " TW_CHASE_KERNEL "("));
        assert_non_null(strstr(p, ".visible .entry " TW_ISA_RESIDENT "("));
        free(p);
    }
    /* stores: one in the warm-up trip, `unroll` at immediate offsets in the measurement trip */
    tw_chase_config st = {TW_MEM_L2, 128, 1 << 20, 32, 16, TW_CHASE_STORE};
    char *p = tw_chase_ptx(&st, 90);
    assert_non_null(p);
    assert_int_equal(count(p, "st.global.cg.u64 ["), 1 + 16);
    assert_int_equal(count(p, "st.global.cg.u64 [%q+15360], %p;"), 1); /* 15 steps of 128 words */
    assert_int_equal(count(p, "ld.global"), 0);
    free(p);
    tw_chase_config dv = {TW_MEM_L1, 128, 1 << 20, 32, 16, TW_CHASE_LOAD_DIV};
    p = tw_chase_ptx(&dv, 90);
    assert_non_null(p);
    assert_int_equal(count(p, "div.u32 %d"), 16);
    free(p);
}

/* ---------------------------------------------------------------- SASS */

typedef struct tools {
    char ptxas[4096], nvdisasm[4096];
} tools;

/* The SASS of one access in a loop, by operation and level. */
static const char *want_of(const tw_chase_config *c)
{
    static const char *const load[] = {"^LDS R", "^LDG\\.E\\.64 R", "^LDG\\.E\\.64\\.STRONG\\.GPU R",
                                       "^LDG\\.E\\.64\\.STRONG\\.GPU R"};
    if (c->op != TW_CHASE_STORE) return load[c->level];
    return c->level == TW_MEM_SHARED ? "^STS \\[" : "^STG\\.E\\.64\\.STRONG\\.GPU (desc)?\\[";
}

/* The loops' access counts of one module: 0, or -1 when it does not assemble
 * or a loop holds other than the expected accesses (and, for LOAD+DIV, one
 * MUFU.RCP per load in the measurement loop, none in the warm-up). */
static int check_module(const tools *t, const tw_chase_config *c, int sm)
{
    const char *want = want_of(c);
    char *ptx = tw_chase_ptx(c, sm);
    assert_non_null(ptx);
    const char *pf = tw_test_path(0, "chase.ptx"), *cf = tw_test_path(1, "chase.cubin");
    FILE *f = fopen(pf, "w");
    assert_non_null(f);
    fputs(ptx, f);
    assert_int_equal(fclose(f), 0);
    free(ptx);
    char cmd[8400], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_%d -o '%s' '%s' 2>&1 && '%s' -c '%s'", t->ptxas, sm, cf, pf, t->nvdisasm,
             cf);
    int rc = tw_test_run(cmd, &out);
    const char *what = tw_chase_op_name(c->op);
    if (rc != 0) {
        fprintf(stderr, "FAIL chase %s %s, %u threads, sm_%d: %.2000s\n", what, tw_mem_level_name(c->level), c->threads,
                sm, out);
        free(out);
        return -1;
    }
    sass s;
    sass_parse(out, &s);
    const kernel *k = sass_kernel(&s, TW_CHASE_KERNEL);
    assert_non_null(k);
    regex_t re, any, rcp;
    assert_int_equal(regcomp(&re, want, REG_EXTENDED | REG_NOSUB), 0);
    assert_int_equal(
        regcomp(&any, c->op == TW_CHASE_STORE ? "^(STG|STS|ST)[. ]" : "^(LDG|LDS|LD)[. ]", REG_EXTENDED | REG_NOSUB),
        0);
    assert_int_equal(regcomp(&rcp, "^MUFU\\.RCP R", REG_EXTENDED | REG_NOSUB), 0);
    int divs = c->op == TW_CHASE_LOAD_DIV ? (int)c->unroll : 0;
    int lo[8], hi[8], n = sass_loops(k, lo, hi, 8), warm = 0, meas = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        int m = count_matches(k, lo[i], hi[i], &re), r = count_matches(k, lo[i], hi[i], &rcp);
        bad += count_matches(k, lo[i], hi[i], &any) - m; /* an access of another kind */
        if (m == 1 && !warm && r == 0)
            warm = 1;
        else if (m == (int)c->unroll && r == divs)
            meas++;
        else if (m != 0 || r != 0)
            bad++;
    }
    int failed = !(warm == 1 && meas == 1 && bad == 0);
    if (failed) {
        fprintf(stderr,
                "FAIL chase %s %s, %u threads, sm_%d: expected a warm-up loop with one /%s/ and a measurement loop "
                "with %u (and %d MUFU.RCP), %d loop(s), %d stray access(es):\n",
                what, tw_mem_level_name(c->level), c->threads, sm, want, c->unroll, divs, n, bad);
        print_loop(k, 0, -1);
    }
    regfree(&re);
    regfree(&any);
    regfree(&rcp);
    sass_free(&s);
    return failed ? -1 : 0;
}

static void test_sass(void **state)
{
    (void)state;
    tools t;
    if (!find_tool("TW_PTXAS", "ptxas", t.ptxas, sizeof t.ptxas) ||
        (!find_tool("TW_NVDISASM", "nvdisasm", t.nvdisasm, sizeof t.nvdisasm) &&
         !find_pip_nvdisasm(t.nvdisasm, sizeof t.nvdisasm)))
        skip();
    static const unsigned threads[] = {1, 4, 32, 256, 1024};
    static const int archs[] = {80, 90};
    int failures = 0, checks = 0;
    for (int op = 0; op < TW_CHASE_OPS; op++)
        for (int lv = 0; lv < TW_MEM_LEVELS; lv++)
            for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++)
                for (size_t ai = 0; ai < sizeof archs / sizeof archs[0]; ai++) {
                    if (op == TW_CHASE_STORE && lv == TW_MEM_L1) continue; /* refused: write-through */
                    tw_chase_config c = {(tw_mem_level)lv, threads[ti], lv == TW_MEM_SHARED ? 32768 : 1 << 20, 32, 1,
                                         (tw_chase_op)op};
                    tw_chase_layout l;
                    if (tw_chase_layout_of(&c, &l) != 0) fail_msg("%s", tw_last_error());
                    c.unroll = l.ring < 8 ? (unsigned)l.ring : 8; /* 1024 threads in 32 KiB: a ring of 4 */
                    failures += check_module(&t, &c, archs[ai]) != 0;
                    checks++;
                }
    fprintf(stderr, "chase SASS: %d modules checked, %d failed\n", checks, failures);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_layout), cmocka_unit_test(test_refused),
                                       cmocka_unit_test(test_ptx), cmocka_unit_test(test_sass)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
