/* libsmbclient, loaded on first use (smbclient-linux.c): it pulls in about
 * 110 shared libraries, 40-80 ms of start-up that every offline command
 * paid while the program linked it. Only the SMB transport loads it now. */
#ifndef NTLENS_MSRPC_SMBCLIENT_LINUX_H
#define NTLENS_MSRPC_SMBCLIENT_LINUX_H

#include <libsmbclient.h>

/* The libsmbclient functions transport-linux.c calls, by their names. */
struct ntl_smbclient {
    __typeof__(smbc_new_context) *new_context;
    __typeof__(smbc_init_context) *init_context;
    __typeof__(smbc_free_context) *free_context;
    __typeof__(smbc_setDebug) *setDebug;
    __typeof__(smbc_setLogCallback) *setLogCallback;
    __typeof__(smbc_setOptionUserData) *setOptionUserData;
    __typeof__(smbc_getOptionUserData) *getOptionUserData;
    __typeof__(smbc_setFunctionAuthDataWithContext) *setFunctionAuthDataWithContext;
    __typeof__(smbc_setTimeout) *setTimeout;
    __typeof__(smbc_setPort) *setPort;
    __typeof__(smbc_setOptionProtocols) *setOptionProtocols;
    __typeof__(smbc_setOptionNoAutoAnonymousLogin) *setOptionNoAutoAnonymousLogin;
    __typeof__(smbc_setOptionUseKerberos) *setOptionUseKerberos;
    __typeof__(smbc_setOptionFallbackAfterKerberos) *setOptionFallbackAfterKerberos;
    __typeof__(smbc_getFunctionOpen) *getFunctionOpen;
    __typeof__(smbc_getFunctionRead) *getFunctionRead;
    __typeof__(smbc_getFunctionWrite) *getFunctionWrite;
    __typeof__(smbc_getFunctionClose) *getFunctionClose;
};

/* Loads libsmbclient.so.0 once per process (thread-safe); later calls
 * return the same table. The table, or NULL when the library or one of
 * its functions is missing (the helper then answers ENOSYS, which the
 * caller reports as a missing libsmbclient). */
const struct ntl_smbclient *ntl_smbclient_load(void);

#endif
