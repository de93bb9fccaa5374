/* libsmbclient through dlopen, so that a program that never opens an SMB
 * pipe never loads Samba's libraries (see smbclient-linux.h). */
#include "smbclient-linux.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define SONAME "libsmbclient.so.0"

static struct ntl_smbclient api;
static const struct ntl_smbclient *loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Each field's symbol name and place in the table, in one list so that a
 * function added to the table cannot be left unresolved. */
#define FN(field) {"smbc_" #field, offsetof(struct ntl_smbclient, field)}
static const struct {
    const char *name;
    size_t at;
} functions[] = {
    FN(new_context), FN(init_context), FN(free_context), FN(setDebug), FN(setLogCallback),
    FN(setOptionUserData), FN(getOptionUserData), FN(setFunctionAuthDataWithContext),
    FN(setTimeout), FN(setPort), FN(setOptionProtocols), FN(setOptionNoAutoAnonymousLogin),
    FN(setOptionUseKerberos), FN(setOptionFallbackAfterKerberos), FN(getFunctionOpen),
    FN(getFunctionRead), FN(getFunctionWrite), FN(getFunctionClose),
};

static void load(void)
{
    /* Global, as when the program linked it: Samba's plugins see its symbols. */
    void *h = dlopen(SONAME, RTLD_NOW | RTLD_GLOBAL);
    if (!h)
        return;
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        void *f = dlsym(h, functions[i].name);
        if (!f) {
            dlclose(h);
            return;
        }
        /* POSIX guarantees a function pointer survives the trip through
         * void * (dlsym's contract). */
        memcpy((char *)&api + functions[i].at, &f, sizeof f);
    }
    loaded = &api;
}

const struct ntl_smbclient *ntl_smbclient_load(void)
{
    pthread_once(&once, load);
    return loaded;
}
