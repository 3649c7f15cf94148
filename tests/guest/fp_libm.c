/*
 * Floating point as ordinary C programs use it: compiler-generated F/D code,
 * glibc's libm (whose RISC-V port relies on exact fflags and frm behaviour,
 * e.g. rint/nearbyint/lrint and fenv), and printf/strtod of floats.
 * Prints every result in hex float and decimal so any deviation shows.
 */
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double vd[] = {
    0.0, -0.0, 1.0, -1.5, 2.5, 3.5, -2.5, 0.1, 1e-310, -4.9e-324, 1.7976931348623157e308,
    123456.789, -98765.4321, 1e22, 6.02214076e23, 0.5, 2.0000000000000004,
    3.141592653589793, 1e-5, 700.0, -745.2, 4294967295.5, -2147483648.75,
};
static volatile float vf[] = {
    0.0f, -0.0f, 1.0f, -1.5f, 2.5f, 0.1f, 1e-40f, 3.4028235e38f, 16777217.0f, 0.333333343f,
    -7.25f, 1e10f, 65504.0f,
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static unsigned flags(void)
{
    return (unsigned)fetestexcept(FE_ALL_EXCEPT);
}

static void double_funcs(void)
{
    for (size_t i = 0; i < N(vd); i++) {
        double x = vd[i];
        feclearexcept(FE_ALL_EXCEPT);
        printf("d %a: sqrt %a exp %a log %a sin %a cbrt %a\n", x, sqrt(x), exp(x),
               log(fabs(x)), sin(x), cbrt(x));
        printf("  pow %a atan2 %a hypot %a fmod %a x*x %a 1/x %a flags %02x\n",
               pow(fabs(x), 0.75), atan2(x, 3.0), hypot(x, 1e-3), fmod(x, 0.7), x * x, 1 / x,
               flags());
        printf("  fma %a floor %a ceil %a trunc %a round %a (long)%ld (unsigned)%u %.17g\n",
               fma(x, 1.0 / 3.0, -x / 3.0), floor(x), ceil(x), trunc(x), round(x),
               fabs(x) < 9e18 ? (long)x : 0L, x >= 0 && x < 4e9 ? (unsigned)x : 0u, x);
    }
}

static void float_funcs(void)
{
    for (size_t i = 0; i < N(vf); i++) {
        float x = vf[i];
        feclearexcept(FE_ALL_EXCEPT);
        printf("f %a: sqrtf %a expf %a logf %a sinf %a x*x %a x/3 %a (double)%a flags %02x\n",
               x, sqrtf(x), expf(x), logf(fabsf(x)), sinf(x), x * x, x / 3.0f, (double)x,
               flags());
        printf("  fmaf %a fminf %a fmaxf %a (int)%d %.9g\n", fmaf(x, x, -1.0f),
               fminf(x, -0.0f), fmaxf(x, 0.0f), fabsf(x) < 2e9f ? (int)x : 0, x);
    }
}

/* rint, nearbyint, lrint and friends in every rounding mode fenv offers. */
static void rounding_modes(void)
{
    static const int modes[] = { FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD };
    static const char *const names[] = { "near", "zero", "down", "up" };
    for (int m = 0; m < 4; m++) {
        fesetround(modes[m]);
        for (size_t i = 0; i < N(vd); i++) {
            double x = vd[i];
            feclearexcept(FE_ALL_EXCEPT);
            double r = rint(x);
            unsigned f1 = flags();
            feclearexcept(FE_ALL_EXCEPT);
            double n = nearbyint(x);
            unsigned f2 = flags();
            long l = fabs(x) < 9e18 ? lrint(x) : 0;
            float fx = (float)x;
            printf("%s %a: rint %a/%02x nearbyint %a/%02x lrint %ld float %a div %a add %a\n",
                   names[m], x, r, f1, n, f2, l, (double)fx, x / 3.0, x + 1e-17);
        }
        printf("%s: fegetround ok %d\n", names[m], fegetround() == modes[m]);
    }
    fesetround(FE_TONEAREST);
}

static void text_conversions(void)
{
    static const char *const text[] = {
        "0.1", "1e-320", "2.2250738585072011e-308", "4.9406564584124654e-324", "1e309",
        "-0", "nan", "-inf", "0x1.fffffffffffffp1023", "3.4028236e38", "123456789012345678901234567890",
    };
    for (size_t i = 0; i < N(text); i++) {
        double d = strtod(text[i], NULL);
        float f = strtof(text[i], NULL);
        printf("strtod(%s) = %a %.17g; strtof = %a %.9g\n", text[i], d, d, (double)f, f);
    }
}

/* A small numeric kernel: the compiler emits fmadd, fcvt, fsgnj, compares. */
static void kernel(void)
{
    double acc = 0, m = -1e300;
    float facc = 0;
    for (int i = 1; i <= 2000; i++) {
        double t = 1.0 / (i * (double)i);
        acc += t * (i & 1 ? 1 : -1);
        facc += (float)t;
        if (t * 1e300 > m)
            m = t;
        acc = fmax(acc, -1.0);
    }
    printf("kernel %a %a %a\n", acc, (double)facc, m);
}

int main(void)
{
    double_funcs();
    float_funcs();
    rounding_modes();
    text_conversions();
    kernel();
    return 0;
}
