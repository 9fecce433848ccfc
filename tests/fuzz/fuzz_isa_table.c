/* The ISA table of Arafa et al. (src/bench/isa_paper.c, read by `truewatt
 * isa` for its comparison column), looked up for every instruction of the
 * ISA table (src/isa/isa_table.c) at both optimisation levels. */
#include <math.h>
#include <stdlib.h>

#include "bench/isa_run.h"
#include "fuzz_common.h"
#include "isa/isa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tw_isa_row rows[1024];
    static double out[1024];
    static size_t n = 0; /* the rows are the same for every input: made once */
    if (n == 0)
        for (size_t i = 0; i < tw_isa_count() && n + 2 <= 1024; i++)
            for (int o = 0; o <= 4; o += 4)
                rows[n++] = (tw_isa_row){.e = tw_isa_get(i), .opt_level = o};
    tw_isa_results r = {.rows = rows, .n = n};
    if (tw_isa_paper_values(fuzz_file(data, size), &r, out) == TW_OK)
        for (size_t i = 0; i < n; i++)
            if (isinf(out[i])) fuzz_fail("an infinite paper value");
    return 0;
}
