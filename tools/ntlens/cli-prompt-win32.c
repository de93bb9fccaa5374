#include <conio.h>
#include <io.h>
#include <stdio.h>

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
