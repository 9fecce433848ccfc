/*
 * fake_cuda.c - a stand-in for the libcuda.so.1 a CUDA program has loaded,
 * for the injection library's UUID look-up (inject.c asks the loaded libcuda
 * for the UUID of a device CUPTI gave no device record for). Its soname is
 * libcuda.so.1, so once inject_host has loaded it, dlopen(RTLD_NOLOAD) finds it.
 *
 * Three devices: 0 and 1 are whole GPUs (both UUID calls agree), 2 is a MIG
 * instance (cuDeviceGetUuid_v2 gives the instance's UUID, cuDeviceGetUuid
 * the GPU's).
 *
 * For PM sampling (src/inject/pm_sampling.c): the primary context of device
 * 0 is active (of none with $FAKE_CUDA_NO_CONTEXT set); it can be retained,
 * released, pushed and popped (nothing is done with it).
 */
#include <cuda.h>

#include <stdlib.h>
#include <string.h>

static const unsigned char gpu_uuid[3][16] = {
    {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x00},
    {0xc0, 0xde, 0x00, 0x01, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x01},
    {0xc0, 0xde, 0x00, 0x02, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x02},
};
static const unsigned char mig_uuid[16] = {0x3a, 0x3a, 0x3a, 0x3a, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x2a};

/* cuda.h maps the plain names to versioned ones with macros: define the exported symbols by hand */
#undef cuDeviceGetUuid
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext *pctx);

CUresult cuDeviceGetCount(int *count)
{
    *count = 3;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (ordinal < 0 || ordinal > 2) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

/* Device dev's UUID; $FAKE_CUDA_UUID0 (32 hex digits) replaces device 0's,
 * so that a test can put the program on the GPU it chose (as inject_host's
 * INJECT_HOST_UUID does for its device records). */
static void device_uuid(CUdevice dev, unsigned char out[16])
{
    memcpy(out, gpu_uuid[dev], 16);
    const char *hex = getenv("FAKE_CUDA_UUID0");
    if (dev != 0 || !hex || strlen(hex) != 32) return;
    for (int i = 0; i < 16; i++) {
        char byte[3] = {hex[2 * i], hex[2 * i + 1], '\0'};
        out[i] = (unsigned char)strtoul(byte, NULL, 16);
    }
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    if (dev < 0 || dev > 2) return CUDA_ERROR_INVALID_DEVICE;
    device_uuid(dev, (unsigned char *)uuid->bytes);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    if (dev < 0 || dev > 2) return CUDA_ERROR_INVALID_DEVICE;
    if (dev == 2)
        memcpy(uuid->bytes, mig_uuid, 16);
    else
        device_uuid(dev, (unsigned char *)uuid->bytes);
    return CUDA_SUCCESS;
}

static int fake_ctx[3]; /* the contexts' handles point here */
static int retained[3];

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    if (dev < 0 || dev > 2) return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = dev == 0 && !getenv("FAKE_CUDA_NO_CONTEXT");
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    if (dev < 0 || dev > 2) return CUDA_ERROR_INVALID_DEVICE;
    retained[dev]++;
    *pctx = (CUcontext)(void *)&fake_ctx[dev];
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    if (dev < 0 || dev > 2 || !retained[dev]) return CUDA_ERROR_INVALID_CONTEXT;
    retained[dev]--;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) { return ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    if (pctx) *pctx = NULL;
    return CUDA_SUCCESS;
}
