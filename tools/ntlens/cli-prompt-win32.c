#include <conio.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "cli-source.h"

bool cli_prompt_password(const char *prompt, char *buf, size_t size)
{
    size_t n = 0;
    int c;

    if (!_isatty(_fileno(stdin)) || size == 0)
        return false;
    fputs(prompt, stderr);
    while ((c = _getch()) != '\r' && c != '\n' && c != EOF) {
        if (c == '\b') {
            if (n)
                n--;
        } else if (n + 1 < size) {
            buf[n++] = (char)c;
        }
    }
    buf[n] = '\0';
    fputc('\n', stderr);
    return true;
}

bool cli_take_env_secret(const char *name, char *buf, size_t size)
{
    size_t n = strlen(name);
    bool found = false;

    /* The C runtime's copy: wipe the value in place, then drop it. */
    for (char **e = _environ; e && *e; e++) {
        if (_strnicmp(*e, name, n) || (*e)[n] != '=')
            continue;
        if (!found && size)
            snprintf(buf, size, "%s", *e + n + 1);
        found = true;
        for (volatile char *v = *e + n + 1; *v; v++)
            *v = '\0';
    }
    _putenv_s(name, "");
    /* The process environment block that child processes inherit. */
    SetEnvironmentVariableA(name, NULL);
    return found;
}
