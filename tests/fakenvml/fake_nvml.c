/* A fake libnvidia-ml.so.1 for tests: the few NVML entry points gpuenv's probe calls through the
 * real pynvml binding, answering what environment variables say.
 *
 *   FAKE_NVML_INIT_RETURN  nvmlInit's return code (0 success, 9 driver not loaded, 18 version
 *                          mismatch, 4 no permission, ...); default 0
 *   FAKE_NVML_DRIVER       driver version string; default "570.133.20"
 *   FAKE_NVML_CUDA         CUDA driver version integer (12080 = 12.8); default 12080
 *   FAKE_NVML_GPUS         GPUs separated by ';', each
 *                          "NAME,PCIDEVICEID,BUSID,CCMAJOR,CCMINOR,MEMMIB,UUID,PERSISTENCE"
 *                          e.g. "NVIDIA H200,0x233510de,00000000:18:00.0,9,0,143771,GPU-...,1"
 *
 * Struct layouts follow nvml.h as pynvml declares them (nvmlPciInfo_t: busIdLegacy[16], domain,
 * bus, device, pciDeviceId, pciSubSystemId, busId[32]; nvmlMemory_t: total, free, used).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 16

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    char name[96];
    unsigned int pci_device_id;
    char bus_id[32];
    int cc_major, cc_minor;
    unsigned long long mem_mib;
    char uuid[96];
    int persistence;
} fake_gpu;

static fake_gpu gpus[MAX_GPUS];
static int gpu_count = -1;
static int initialised = 0;

static void load(void) {
    if (gpu_count >= 0) return;
    gpu_count = 0;
    const char *spec = getenv("FAKE_NVML_GPUS");
    if (!spec) return;
    char *copy = strdup(spec), *save = NULL;
    for (char *item = strtok_r(copy, ";", &save); item && gpu_count < MAX_GPUS; item = strtok_r(NULL, ";", &save)) {
        fake_gpu *g = &gpus[gpu_count];
        memset(g, 0, sizeof *g);
        if (sscanf(item, "%95[^,],%x,%31[^,],%d,%d,%llu,%95[^,],%d", g->name, &g->pci_device_id, g->bus_id,
                   &g->cc_major, &g->cc_minor, &g->mem_mib, g->uuid, &g->persistence) == 8)
            gpu_count++;
    }
    free(copy);
}

static int index_of(void *handle) {
    long i = (long)((fake_gpu *)handle - gpus);
    return (handle && i >= 0 && i < gpu_count) ? (int)i : -1;
}

static int copy_str(char *dst, unsigned int len, const char *src) {
    if (strlen(src) + 1 > len) return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
    strcpy(dst, src);
    return 0;
}

int nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    const char *r = getenv("FAKE_NVML_INIT_RETURN");
    int ret = r ? atoi(r) : 0;
    if (ret == 0) { initialised = 1; load(); }
    return ret;
}
int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
int nvmlInit(void) { return nvmlInitWithFlags(0); }
int nvmlShutdown(void) {
    if (!initialised) return 1; /* NVML_ERROR_UNINITIALIZED */
    initialised = 0;
    return 0;
}

const char *nvmlErrorString(int result) {
    switch (result) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    default: return "Unknown Error";
    }
}

int nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialised) return 1;
    const char *v = getenv("FAKE_NVML_DRIVER");
    return copy_str(version, length, v ? v : "570.133.20");
}
int nvmlSystemGetCudaDriverVersion(int *v) {
    if (!initialised) return 1;
    const char *c = getenv("FAKE_NVML_CUDA");
    *v = c ? atoi(c) : 12080;
    return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }

int nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialised) return 1;
    *count = (unsigned int)gpu_count;
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void **handle) {
    if (!initialised) return 1;
    if ((int)index >= gpu_count) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *handle = &gpus[index];
    return 0;
}
int nvmlDeviceGetName(void *handle, char *name, unsigned int length) {
    int i = index_of(handle);
    return i < 0 ? 2 : copy_str(name, length, gpus[i].name);
}
int nvmlDeviceGetUUID(void *handle, char *uuid, unsigned int length) {
    int i = index_of(handle);
    return i < 0 ? 2 : copy_str(uuid, length, gpus[i].uuid);
}
int nvmlDeviceGetPciInfo_v3(void *handle, nvmlPciInfo_t *pci) {
    int i = index_of(handle);
    if (i < 0) return 2;
    memset(pci, 0, sizeof *pci);
    unsigned int domain = 0, bus = 0, dev = 0, fn = 0;
    sscanf(gpus[i].bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn);
    pci->domain = domain; pci->bus = bus; pci->device = dev;
    pci->pciDeviceId = gpus[i].pci_device_id;
    pci->pciSubSystemId = gpus[i].pci_device_id;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04x:%02x:%02x.%x", domain & 0xffff, bus, dev, fn);
    snprintf(pci->busId, sizeof pci->busId, "%s", gpus[i].bus_id);
    return 0;
}
int nvmlDeviceGetCudaComputeCapability(void *handle, int *major, int *minor) {
    int i = index_of(handle);
    if (i < 0) return 2;
    *major = gpus[i].cc_major; *minor = gpus[i].cc_minor;
    return 0;
}
int nvmlDeviceGetMemoryInfo(void *handle, nvmlMemory_t *mem) {
    int i = index_of(handle);
    if (i < 0) return 2;
    mem->total = gpus[i].mem_mib << 20; mem->used = 0; mem->free = mem->total;
    return 0;
}
int nvmlDeviceGetPersistenceMode(void *handle, int *mode) {
    int i = index_of(handle);
    if (i < 0) return 2;
    *mode = gpus[i].persistence;
    return 0;
}
