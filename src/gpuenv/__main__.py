from gpuenv.cli import run

run()
