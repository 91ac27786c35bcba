from aoi.cli import main

main()
