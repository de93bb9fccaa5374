/* libsmbclient through dlopen, so that a program that never opens an SMB
 * pipe never loads Samba's libraries (see smbclient-linux.h). */
#include "smbclient-linux.h"

#include <pthread.h>
#include <stddef.h>

#include "ntlens/dl.h"

static struct ntl_smbclient api;
static const struct ntl_smbclient *loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Each field's symbol name and place in the table, in one list so that a
 * function added to the table cannot be left unresolved. */
#define FN(field) {"smbc_" #field, offsetof(struct ntl_smbclient, field)}
static const struct ntl_dl_function functions[] = {
    FN(new_context), FN(init_context), FN(free_context), FN(setDebug), FN(setLogCallback),
    FN(setOptionUserData), FN(getOptionUserData), FN(setFunctionAuthDataWithContext),
    FN(setTimeout), FN(setPort), FN(setOptionProtocols), FN(setOptionNoAutoAnonymousLogin),
    FN(setOptionUseKerberos), FN(setOptionFallbackAfterKerberos), FN(getFunctionOpen),
    FN(getFunctionRead), FN(getFunctionWrite), FN(getFunctionClose),
};

static void load(void)
{
    struct ntl_error err;
    /* Global, as when the program linked it: Samba's plugins see its symbols. */
    if (ntl_dl_load("libsmbclient.so.0", true, functions, sizeof functions / sizeof functions[0],
                    &api, &err) == 0)
        loaded = &api;
}

const struct ntl_smbclient *ntl_smbclient_load(void)
{
    pthread_once(&once, load);
    return loaded;
}
