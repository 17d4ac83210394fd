"""The word lists behind ``names``: first names, surnames, and the words that make a
capitalised phrase a place, a business or plain prose rather than a person."""

from __future__ import annotations

FIRST = """
aaron abdul abigail adam adrian ahmed aisha alan albert alberto alejandro aleksandra alex
alexander alexandra alexis alfie ali alice alicia alison amanda amelia amir amit amy ana anders
andrea andreas andrew andrés andy angela angelo anita ann anna anne annemarie anne-marie annette
anthony antoine anton antonio anya arjun arnaud arthur asha ashley astrid aurélie ava barbara
beatriz ben benjamin bernard beth bianca bjorn björn blake bogdan brandon brenda brian bruno
bryan camila camille carl carla carlos carmen carol caroline carolyn catherine cecilia céline
charles charlie charlotte chen cheryl chloe chris christian christina christine christopher
claire clara claudia colin connor cristina daan dan daniel daniela danielle david debbie deborah
deepak denise dennis derek diana diego dimitri dmitri dominic donald donna doris dorothy douglas
edward eleanor elena eli elif elijah elisa elisabeth elizabeth ella ellen emily emma emre
enrique eric erik erin ethan eva evelyn fabian fatima federica felipe felix fernando finn fiona
florian francesca francesco francisco françois frédéric gabriel gabriela gareth gary george
georg gérard gianluca giorgio giovanni giulia giuseppe gloria gonzalo gordon graham greg gregory
guillaume gustavo hana hannah hans harold harry heather hector héctor heidi helen helena henrik
henry hiroshi hugo ian ibrahim ines inés ingrid irene isaac isabel isabella isabelle ivan jacob
jacqueline jake james jane janet janice jasmine jason javier jean jeffrey jennifer jenny jeremy
jessica joan joanna joaquín joe joel johan johann johannes john jonas jonathan jordi jorge josé
joseph josh joshua juan judith julian julie julien julio justin kai karen karin karl kate
katherine kathleen kathryn katie kayla keith kelly kenji kenneth kevin kim klaus kyle lara
larissa laura lauren laurent leah lena leo leon leonardo liam linda lisa lorenzo louis louise
lucas lucía lucia luis luisa luka lukas luke maciej magdalena manuel marc marcel marco marcus
margaret maria marie marina mario marion marisol marta martha martin mary matteo matthew
matthias maurice max maxime megan mehmet melissa mia michael michaela michel michelle miguel
mikael mike miriam mohammed mohamed monica nadia nancy naomi natalia natasha nathan nicholas
nicola nicolas nicole niels nikhil nikolai nina noah noémie nora oliver olivia omar oscar pablo
paolo patricia patrick paul paula pedro peter philip philippe pierre pieter pooja priya rachel
rafael rahul raj rajesh ramón raquel raul raúl rebecca ricardo richard rob robert roberto robin
roger ronald rosa ruth ryan sabine sam samantha samuel sandra sanjay sara sarah sean sebastian
sergio sharon simon sofia sofía sophie stefan stefano stephanie stephen steve steven susan sven
svetlana tanya teresa thomas tim timothy tobias tom tomás tomasz tony ursula valentina valeria
vanessa vera victor vikram vincent virginie jürgen katharina kristýna olamide tereza jana petra
lucie zuzana jiří tomáš dagmar uwe dieter günter wolfgang sabrina wei wendy william xavier
yasmin yuki yusuf zoe zoé zainab zhang lars lotte sanne thijs jeroen wouter bram femke anouk
esther ruben kofi amara chidi ngozi oluwaseun aditi ananya kavya rohan vivek
"""

# First names that are also everyday words or places: need a surname or a greeting.
COMMON = """
will may grace rose mark bill hope joy faith june april august summer amber sunny art dawn jack
pat sue guy frank rich ray gene lily iris violet ruby jade pearl holly ivy chase hunter drew
lane dean herb rod don sky river sage paige page victoria jordan georgia virginia austin dallas
florence paris chelsea sydney madison lincoln jackson brooklyn carter miles wade penny sandy
rusty bob nick bella angel star autumn crystal jan max milan julia hugo oscar destiny harmony
heaven honey ginger cliff glen glenn heath jay ken lee les norm
"""

SURNAMES = """
smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez
gonzalez wilson anderson thomas taylor moore martin jackson thompson white harris clark lewis
robinson walker young allen king wright scott green baker adams nelson hill campbell mitchell
roberts carter phillips evans turner torres parker collins edwards stewart morris murphy cook
rogers morgan cooper peterson reed bailey bell kelly howard ward cox richardson wood watson
brooks bennett gray james hughes price sanders patel shah kumar singh sharma gupta nair reddy
khan ali chen wang li zhang liu yang huang wu zhou kim lee park nguyen tran müller mueller
schmidt schneider fischer weber meyer wagner becker schulz hoffmann koch richter klein wolf
neumann schwarz rossi russo ferrari esposito bianchi romano colombo ricci marino bruno dubois
durand leroy moreau simon laurent lefebvre michel bernard petit fernandez sanchez perez gomez
diaz alvarez álvarez romero ruiz navarro jimenez jiménez moreno muñoz silva santos oliveira
costa pereira de jong jansen bakker visser smit meijer bos mulder dijkstra kowalski nowak
wiśniewski o'neill o'brien kennedy doyle roe doe hardy nakamura tanaka suzuki sato ivanov petrov
novak horvat yilmaz kaya demir andersson johansson larsson nielsen hansen jensen olsen
"""

# Surnames that are also everyday words: never enough after a lower-case first name.
WORDLIKE_SURNAMES = frozenset(
    """
cook wood green white young king hill brown park bell price ward gray reed baker turner hardy
cooper walker wright scott martin james thomas simon bernard michel bruno costa silva santos lee
kim li wolf klein koch bos smit petit moore rogers morgan bailey cox brooks parker carter hughes
bennett howard sanders allen evans
""".split()
)

# Words after a capitalised first name that make the phrase a place, business or thing.
PLACE_WORDS = frozenset(
    """
street st st. road rd rd. avenue ave ave. boulevard blvd lane ln drive dr dr. court ct way place
pl square sq park plaza mall station airport bridge hall house tower centre center hospital
clinic university college school academy institute museum library church cathedral store shop
market bank branch hotel inn cafe café restaurant bar pub bakery pharmacy gallery theatre
theater stadium arena inc inc. ltd ltd. llc gmbh corp co co. company group foundation trust fund
airlines air airways motors labs studio studios pro max plus mini ultra edition premium cloud
app apps os series model kit county city town valley beach island river lake mountain hills
heights estates cottage farm lodge manor barn villa mill grange rectory vicarage mansions
buildings
""".split()
)
# Place words that are also common surnames: after a first name or a strong cue ("my name
# is", a title, a greeting, a name field) and at the end of the phrase, a person's.
# Street types other than "lane" are left out: "George Street" is a place far more often.
PLACE_SURNAMES = frozenset(
    """
hall lane park house church branch hills villa lodge bridge tower lake beach mill grange
""".split()
)
STOP = frozenset(
    """
i a an the and or but if of to in on at for from with by as is are was were be been am my team all
everyone there again so very much lot you your yours we our us they them he she it this that
these those customer customers sir madam support guys folks friend friends world advance sorry
please ok okay yes no hello hi hey thanks thank dear regards best cheers morning afternoon
evening just also here today tomorrow soon monday tuesday wednesday thursday friday saturday
sunday january february march april may june july august september october november december
order invoice ticket account refund payment card phone email address number help admin user
agent bot assistant service manager sales billing customer's not will can could would should
shall might must have has had do does did got get
""".split()
)
# Everyday words that are also surnames ("Julie May"): a surname only after a strong cue
# and at the end of a clause, so "Dear Anna May I ask" stays a question.
STOP_SURNAMES = frozenset("may will best".split())
ORG_AFTER = frozenset("support team sales service care desk billing helpdesk crew staff".split())
PARTICLES = frozenset(
    "van von der den de da di del della des du la le dos das bin ben al el ter ten mac".split()
)
