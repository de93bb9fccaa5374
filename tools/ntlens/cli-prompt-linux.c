#include <stdio.h>
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
