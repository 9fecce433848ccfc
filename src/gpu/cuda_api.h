/* Our own declarations of the CUDA driver API subset truewatt uses. cuda.h is
 * not included by the library (it builds where no CUDA exists): the types,
 * constants and signatures are declared here to match the driver ABI (cuda.h
 * of CUDA 12/13, checked against CUDA 13.0). driver.c calls them through
 * dlopen'ed pointers. Enums of cuda.h are int-sized on every ABI the driver
 * ships for, so they are declared as int here. */
#ifndef TW_GPU_CUDA_API_H
#define TW_GPU_CUDA_API_H

#include <stddef.h>

/* ---------------------------------------------------------------- return codes (CUresult) */

typedef int CUresult;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_INVALID_IMAGE 200
#define CUDA_ERROR_INVALID_PTX 218
#define CUDA_ERROR_JIT_COMPILER_NOT_FOUND 221
#define CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222
#define CUDA_ERROR_NOT_FOUND 500

/* ---------------------------------------------------------------- handles */

typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* CUdeviceptr_v2: 64-bit */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

_Static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr is 64 bits");

/* ---------------------------------------------------------------- enums (int-sized) */

typedef int CUdevice_attribute;
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE 13 /* kHz */
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE 38 /* bytes */
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR 39
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR 81 /* bytes */
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97    /* bytes */
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

typedef int CUjit_option;
#define CU_JIT_INFO_LOG_BUFFER 3
#define CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CU_JIT_OPTIMIZATION_LEVEL 7
#define CU_JIT_LOG_VERBOSE 12

#define CU_EVENT_DEFAULT 0u

/* ---------------------------------------------------------------- functions (pointer types) */

typedef CUresult (*cuInit_fn)(unsigned int flags);
typedef CUresult (*cuDeviceGetCount_fn)(int *count);
typedef CUresult (*cuDeviceGet_fn)(CUdevice *device, int ordinal);
typedef CUresult (*cuDeviceGetName_fn)(char *name, int len, CUdevice dev);
typedef CUresult (*cuDeviceGetAttribute_fn)(int *pi, CUdevice_attribute attrib, CUdevice dev);
typedef CUresult (*cuDevicePrimaryCtxRetain_fn)(CUcontext *pctx, CUdevice dev);
typedef CUresult (*cuDevicePrimaryCtxRelease_fn)(CUdevice dev); /* _v2 */
typedef CUresult (*cuCtxSetCurrent_fn)(CUcontext ctx);
typedef CUresult (*cuCtxSynchronize_fn)(void);
typedef CUresult (*cuModuleLoadDataEx_fn)(CUmodule *module, const void *image, unsigned int numOptions,
                                          CUjit_option *options, void **optionValues);
typedef CUresult (*cuModuleGetFunction_fn)(CUfunction *hfunc, CUmodule hmod, const char *name);
typedef CUresult (*cuModuleUnload_fn)(CUmodule hmod);
typedef CUresult (*cuMemAlloc_fn)(CUdeviceptr *dptr, size_t bytesize);                       /* _v2 */
typedef CUresult (*cuMemFree_fn)(CUdeviceptr dptr);                                          /* _v2 */
typedef CUresult (*cuMemsetD32_fn)(CUdeviceptr dstDevice, unsigned int ui, size_t n);        /* _v2 */
typedef CUresult (*cuMemcpyDtoH_fn)(void *dstHost, CUdeviceptr srcDevice, size_t byteCount); /* _v2 */
typedef CUresult (*cuLaunchKernel_fn)(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                      unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                      unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
typedef CUresult (*cuEventCreate_fn)(CUevent *phEvent, unsigned int flags);
typedef CUresult (*cuEventRecord_fn)(CUevent hEvent, CUstream hStream);
typedef CUresult (*cuEventSynchronize_fn)(CUevent hEvent);
typedef CUresult (*cuEventElapsedTime_fn)(float *pMilliseconds, CUevent hStart, CUevent hEnd); /* _v2 */
typedef CUresult (*cuEventDestroy_fn)(CUevent hEvent);                                         /* _v2 */
typedef CUresult (*cuGetErrorName_fn)(CUresult error, const char **pStr);
typedef CUresult (*cuGetErrorString_fn)(CUresult error, const char **pStr);

#endif
