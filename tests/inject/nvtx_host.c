/*
 * nvtx_host.c - a program that uses the NVTX v3 API (header-only, as
 * PyTorch and JAX do) and no CUDA, for inject_e2e.sh: run with
 * NVTX_INJECTION64_PATH naming libtruewatt-inject.so, its ranges must reach
 * the events file. Two threads nest push/pop ranges, one of them also in a
 * domain with a registered string; a start/end range opens in one thread and
 * ends in the other; one name is wide characters.
 *
 * Then it forks a child that records one range and exits (inside the
 * parent's open "m outer", which it inherits). Prints "tid main N", "tid
 * worker N" and "tid child N" (Linux thread ids) for the checks.
 */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static nvtxRangeId_t across; /* started by main, ended by the worker */
static long worker_tid;

static void *worker(void *arg)
{
    (void)arg;
    worker_tid = (long)syscall(SYS_gettid);
    nvtxDomainHandle_t dom = nvtxDomainCreateA("my domain");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered step");
    nvtxRangePushA("w outer");
    pause_ms(2);
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg;
    nvtxDomainRangePushEx(dom, &a); /* depth 1 in its domain, though inside "w outer" */
    nvtxRangePushA("w inner");      /* depth 2 in the default domain */
    pause_ms(2);
    nvtxRangePop();                   /* w inner */
    nvtxDomainRangePop(dom);          /* registered step */
    nvtxRangePushW(L"w wide \u00e9"); /* UTF-8 in the file */
    pause_ms(1);
    nvtxRangePop();
    nvtxRangeEnd(across);
    nvtxRangePop(); /* w outer */
    nvtxRangePop(); /* nothing open: ignored, counted */
    return NULL;
}

int main(void)
{
    printf("tid main %ld\n", (long)syscall(SYS_gettid));
    nvtxRangePushA("m outer");
    across = nvtxRangeStartA("across threads");
    nvtxRangePushA("m inner, with a comma");
    pause_ms(2);
    nvtxRangePushA("m innermost");
    pause_ms(1);
    nvtxRangePop();
    nvtxRangePop();
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
    pthread_join(t, NULL);
    printf("tid worker %ld\n", worker_tid);
    fflush(stdout);
    pid_t child = fork(); /* with main's closed ranges not yet written: the child must not repeat them */
    if (child == 0) {
        nvtxRangePushA("child range");
        pause_ms(1);
        nvtxRangePop();
        exit(0);
    }
    int st = 0;
    if (child < 0 || waitpid(child, &st, 0) != child || st != 0) return 1;
    printf("tid child %ld\n", (long)child);
    nvtxRangePop();                 /* m outer */
    nvtxRangePushA("open at exit"); /* never closed: not written */
    return 0;
}
