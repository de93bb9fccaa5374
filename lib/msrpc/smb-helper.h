/* Inside lib/msrpc (Linux): the SMB helper processes behind each pipe of
 * transport-linux.c, and the zygote that forks them for threaded programs
 * (smb-zygote-linux.c). */
#ifndef NTLENS_MSRPC_SMB_HELPER_H
#define NTLENS_MSRPC_SMB_HELPER_H

/* The helper's end of its socketpair. */
#define NTL_SMB_HELPER_FD 3

/* Serves one pipe over NTL_SMB_HELPER_FD: reads the settings, opens the
 * pipe, relays reads and writes. Never returns (transport-linux.c). */
_Noreturn void ntl_smb_helper_run(void);

/* Starts a helper process serving sock through the zygote (started on
 * first use, restarted when it died). Returns a pidfd of the helper, or -1
 * with errno set. Thread-safe. */
int ntl_smb_zygote_spawn(int sock);

#endif
