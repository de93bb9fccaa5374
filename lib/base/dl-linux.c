/* ntlens/dl.h on Linux: dlopen and dlsym. */
#include "ntlens/dl.h"

#include <dlfcn.h>
#include <string.h>

int ntl_dl_load(const char *soname, bool global, const struct ntl_dl_function *fns, size_t n,
                void *table, struct ntl_error *err)
{
    void *h = dlopen(soname, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!h)
        return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET, "cannot load %s: %s",
                             soname, dlerror());
    for (size_t i = 0; i < n; i++) {
        void *f = dlsym(h, fns[i].name);
        if (!f) {
            dlclose(h);
            return ntl_error_set(err, NTL_ERR_UNSUPPORTED, NULL, NTL_NO_OFFSET, "%s has no %s",
                                 soname, fns[i].name);
        }
        /* POSIX guarantees a function pointer survives the trip through
         * void * (dlsym's contract). */
        memcpy((char *)table + fns[i].at, &f, sizeof f);
    }
    return 0;
}
