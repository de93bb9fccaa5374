#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli-source.h"

bool cli_prompt_password(const char *prompt, char *buf, size_t size)
{
    struct termios old, quiet;
    FILE *tty = fopen("/dev/tty", "r+");
    bool ok;

    if (!tty)
        return false;
    if (tcgetattr(fileno(tty), &old) != 0) {
        fclose(tty);
        return false;
    }
    quiet = old;
    quiet.c_lflag &= ~(tcflag_t)ECHO;
    fputs(prompt, tty);
    fflush(tty);
    tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
    ok = fgets(buf, (int)size, tty) != NULL;
    tcsetattr(fileno(tty), TCSAFLUSH, &old);
    fputc('\n', tty);
    fclose(tty);
    if (ok)
        buf[strcspn(buf, "\r\n")] = '\0';
    return ok;
}

extern char **environ;

bool cli_take_env_secret(const char *name, char *buf, size_t size)
{
    size_t n = strlen(name);
    bool found = false;

    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, name, n) || (*e)[n] != '=')
            continue;
        if (!found && size)
            snprintf(buf, size, "%s", *e + n + 1);
        found = true;
        /* /proc/PID/environ shows the strings where the process started
         * with them: wipe the value there, then drop the variable. */
        for (volatile char *v = *e + n + 1; *v; v++)
            *v = '\0';
    }
    unsetenv(name);
    return found;
}
