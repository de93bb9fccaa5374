/* The test program's hot function in a shared library: 70% of its work. */
unsigned long hot_lib(unsigned long n);

/* The same loop as hot_exe's, so work divides as iterations do. */
unsigned long hot_lib(unsigned long n)
{
    volatile unsigned long sink = 0;
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
    return sink;
}
